import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { freePort } from '../../src/embedded/managed-process';
import { ensureBinaries } from '../../src/embedded/provision';
import { startTemporalDevServer, temporalAddress } from '../../src/embedded/temporal-dev-server';
(async () => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const binaries = ensureBinaries(loadConfig().cacheDir);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eager-'));
  const port = await freePort();
  const server = await startTemporalDevServer({ binary: binaries.temporal, dataDir: dir, port, namespace: 'default' });
  const workerConn = await NativeConnection.connect({ address: temporalAddress(port) });
  const worker = await Worker.create({ connection: workerConn, taskQueue: 'eager', workflowsPath: require.resolve('./wf') });
  const otherNative = new Client({ connection: await NativeConnection.connect({ address: temporalAddress(port) }) });
  const grpcJs = new Client({ connection: await Connection.connect({ address: temporalAddress(port) }) });
  await worker.runUntil(async () => {
    for (const [name, client] of [['other native', otherNative], ['grpc-js', grpcJs]] as const) {
      const t = performance.now(); let eagerCount = 0;
      for (let i = 0; i < 3; i++) {
        const handle = await client.workflow.start('quick', { taskQueue: 'eager', workflowId: `w-${name}-${i}-${Date.now()}`, requestEagerStart: true });
        if ((handle as any).eagerlyStarted) eagerCount++;
        await handle.result();
      }
      console.log({ name, eagerCount, msPerWorkflow: ((performance.now() - t) / 3).toFixed(1) });
    }
  });
  await server.stop(); fs.rmSync(dir, { recursive: true, force: true }); process.exit(0);
})();
