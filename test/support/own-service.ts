import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/util/ports';
import { serviceEnv } from './global-setup';
import { ServiceProcess } from './service-process';
import { testStack } from './test-stack';

export interface OwnService {
  process: ServiceProcess;
  baseUrl: string;
  wsUrl: string;
  port: number;
  /** SIGTERM, then SIGKILL if it has not stopped within STOP_MS (its worker waits for the activities in flight). */
  stop(): Promise<void>;
}

const STOP_MS = 15_000;

/**
 * A whole service (start.ts: API and worker) on the test stack's Temporal and MongoDB, ready, with
 * a task queue of its own so that the shared service's worker takes none of its tasks; `env` adds
 * to or overrides the stack's (MONGODB_DATABASE gives it a database of its own).
 */
export async function startOwnService(name: string, env: Record<string, string> = {}): Promise<OwnService> {
  const stack = testStack();
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(stack.runDir, `${name}-`));
  const process = ServiceProcess.spawn(
    'start.ts',
    serviceEnv(stack, { PORT: String(port), DATA_DIR: dataDir, TEMPORAL_TASK_QUEUE: `${name}-${port}`, ...env }),
    path.join(dataDir, 'service.log'),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await process.waitReady(baseUrl);
  } catch (error) {
    await process.stop();
    throw error;
  }
  return {
    process,
    baseUrl,
    wsUrl: `ws://127.0.0.1:${port}`,
    port,
    async stop() {
      await Promise.race([process.stop(), new Promise((resolve) => setTimeout(resolve, STOP_MS).unref())]);
      await process.stop('SIGKILL');
    },
  };
}
