import fs from 'node:fs';
import type { RunningTestStack } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const running = (globalThis as { acsTestStack?: RunningTestStack }).acsTestStack;
  if (!running) return;
  await running.stop();
  // ACS_KEEP_TEST_RUN=1 keeps the servers' data and logs for a post-mortem.
  if (process.env.ACS_KEEP_TEST_RUN !== '1') fs.rmSync(running.runDir, { recursive: true, force: true });
}
