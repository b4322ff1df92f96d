import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { freePort } from '../../src/embedded/managed-process';
import { ensureBinaries } from '../../src/embedded/provision';
import { startTemporalDevServer, temporalAddress } from '../../src/embedded/temporal-dev-server';
(async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const binaries = ensureBinaries(loadConfig().cacheDir);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eager-'));
  const port = await freePort();
  const server = await startTemporalDevServer({ binary: binaries.temporal, dataDir: dir, port, namespace: 'default' });
  const connection = await NativeConnection.connect({ address: temporalAddress(port) });
  const worker = await Worker.create({ connection, taskQueue: 'eager', workflowsPath: require.resolve('./wf') });
  const client = new Client({ connection });
  await worker.runUntil(async () => {
    for (const eager of [false, true, false, true]) {
      const t = performance.now(); let eagerCount = 0;
      for (let i = 0; i < 30; i++) {
        const handle = await client.workflow.start('quick', { taskQueue: 'eager', workflowId: `w-${eager}-${i}-${Date.now()}`, requestEagerStart: eager });
        if ((handle as any).eagerlyStarted) eagerCount++;
        await handle.result();
      }
      console.log({ eager, eagerCount, msPerWorkflow: ((performance.now() - t) / 30).toFixed(1) });
    }
  });
  await connection.close(); await server.stop(); fs.rmSync(dir, { recursive: true, force: true });
})();
