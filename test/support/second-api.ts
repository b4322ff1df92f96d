import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/util/ports';
import { serviceEnv } from './global-setup';
import { ServiceProcess } from './service-process';
import { testStack } from './test-stack';

/** Another API process (server.ts: no worker of the task queue) on the test stack's Temporal and MongoDB, ready; `env` adds to or overrides the stack's. */
export async function startSecondApi(
  name: string,
  env: Record<string, string> = {},
): Promise<{ process: ServiceProcess; wsUrl: string; port: number }> {
  const stack = testStack();
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(stack.runDir, `${name}-`));
  const process = ServiceProcess.spawn(
    'server.ts',
    serviceEnv(stack, { ...env, PORT: String(port), DATA_DIR: dataDir }),
    path.join(dataDir, 'service.log'),
  );
  await process.waitReady(`http://127.0.0.1:${port}`);
  return { process, wsUrl: `ws://127.0.0.1:${port}`, port };
}

/** A second API process for the file's tests: started before them, stopped after them. Use the returned function inside tests for its base URL. */
export function useSecondApi(name: string): () => string {
  let started: { process: ServiceProcess; port: number } | undefined;
  beforeAll(async () => {
    started = await startSecondApi(name);
  });
  afterAll(() => started?.process.stop());
  return () => {
    if (!started) throw new Error('useSecondApi: the second process is only there inside tests');
    return `http://127.0.0.1:${started.port}`;
  };
}
