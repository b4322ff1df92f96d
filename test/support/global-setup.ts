import { startLocalStack, type LocalStack } from './local-stack';

export { serviceEnv } from './local-stack';

const MONGO_DATABASE = 'acs_test';

export type RunningTestStack = Pick<LocalStack, 'stop' | 'runDir'>;

/** Once per `npm test`: the real Temporal dev server and FerretDB on free loopback ports, and the service on top. */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const running = await startLocalStack({ runDirPrefix: 'acs-test-', database: MONGO_DATABASE });
  (globalThis as { acsTestStack?: RunningTestStack }).acsTestStack = running;
  const { stack } = running;
  process.stdout.write(
    `\n[test stack] ready in ${Date.now() - started} ms: ${stack.baseUrl}, Temporal ${stack.temporalAddress}, FerretDB ${stack.mongoUri}, logs in ${running.runDir}\n`,
  );
}
