import fs from 'node:fs';

/** What the global setup started for this test run, shared with every test file through a JSON file. */
export interface TestStack {
  baseUrl: string;
  wsUrl: string;
  adminKey: string;
  jwtSecret: string;
  callbackSigningSecret: string;
  /** SECRETS_KEY: base64 of 32 bytes. */
  secretsKey: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  mongoUri: string;
  mongoDatabase: string;
  runDir: string;
  binaries: { temporal: string; ferretdb: string };
  servicePid: number;
}

export const STACK_FILE_VARIABLE = 'ACS_TEST_STACK_FILE';

export function testStack(): TestStack {
  const file = process.env[STACK_FILE_VARIABLE];
  if (!file) throw new Error(`${STACK_FILE_VARIABLE} is not set: run the tests with npm test`);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as TestStack;
}
