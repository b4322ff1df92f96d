// Three projects: `unit` needs no servers (the tests beside the code, the workflow under Temporal's
// time-skipping test server); `integration` and `slow` run against the real stack the global setup
// starts. `slow` holds the suites that take minutes (the fuzzer, the SSRF matrix, crashes and
// restarts, replays), so that the rest can be run on their own while working.
// `npm run test:unit`, `test:integration` and `test:slow` pick one; `npm test` runs all three.
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

const SLOW = [
  'test/security/mutation-fuzz.test.ts',
  'test/security/ssrf-matrix.test.ts',
  'test/security/event-loop-stalls.test.ts',
  'test/durability.test.ts',
  'test/map-durability.test.ts',
  'test/embedded-lifecycle.test.ts',
  'test/ops/tracing.test.ts',
  'test/tasks/replay.test.ts',
];

// The real Temporal dev server and FerretDB, and the service, for the projects that test against them.
// Jest runs a global setup once per run for each distinct file, whichever projects name it, and only
// when a test of such a project is selected: one stack for `integration` and `slow` together.
const onTheStack = {
  ...shared,
  roots: ['<rootDir>/test'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
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
      ...onTheStack,
      displayName: 'integration',
      testPathIgnorePatterns: ['/node_modules/', ...SLOW.map((file) => `<rootDir>/${file}`)],
    },
    {
      ...onTheStack,
      displayName: 'slow',
      testMatch: SLOW.map((file) => `<rootDir>/${file}`),
    },
  ],
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  // Global only: Jest ignores a project's testTimeout. A bound for a test that is stuck, not a
  // measure of speed: a test waits up to a minute for each thing it expects (test/support/until.ts),
  // and on a busy machine a test takes several times as long as on a quiet one.
  testTimeout: 180_000,
  maxWorkers: 2,
};
