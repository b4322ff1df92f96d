// Two projects: `unit` needs no servers (the tests beside the code, the workflow under Temporal's
// time-skipping test server); `integration` runs against the real stack the global setup starts.
// `npm run test:unit` and `npm run test:integration` pick one; `npm test` runs both.
const shared = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j)s$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
    ],
  },
  // jose ships ES modules only; Jest's module loader needs them transformed.
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      roots: ['<rootDir>/src', '<rootDir>/workflows', '<rootDir>/activities'],
    },
    {
      ...shared,
      displayName: 'integration',
      roots: ['<rootDir>/test'],
      // Run only when an integration test is selected: the real Temporal dev server and FerretDB, and the service.
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  // Global only: Jest ignores a project's testTimeout. A bound for a test that is stuck, not a
  // measure of speed: a test waits up to a minute for each thing it expects (test/support/until.ts),
  // and on a busy machine a test takes several times as long as on a quiet one.
  testTimeout: 180_000,
  maxWorkers: 2,
};
