/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/workflows', '<rootDir>/activities'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  // jose ships ES modules only; Jest's module loader needs them transformed.
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
