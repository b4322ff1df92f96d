import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { secretBoxOf } from '../../src/auth/secret-box';
import { loadConfig } from '../../src/config/config';
import { freePort } from '../../src/util/ports';
import { createLogger } from '../../src/ops/logger';
import { AgentStore } from '../../src/registry/agent-store';
import { RecentAgents } from '../../src/registry/recent-agents';
import { TaskChanges } from '../../src/tasks/task-changes';
import { Store } from '../../src/store/mongo';
import { AgentServer, accepts } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { serviceEnv } from '../support/global-setup';
import { ServiceProcess } from '../support/service-process';
import { waitForTask } from '../support/tasks';
import { connectTemporal } from '../support/temporal';
import { testStack } from '../support/test-stack';
import { createMetrics } from '../../src/ops/metrics';
import { CheckPool } from '../../src/user-schemas/check-pool';

/** The workers' schema checks: one pool for the file. */
const schemas = new CheckPool({ threads: 1, timeoutMs: 10_000 });
afterAll(() => schemas.close());

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * The last commit whose workflow made the agent call a local activity, and the files its workflow
 * bundle is built from. Read from git, so the test runs the code that version really shipped.
 */
const PREVIOUS_VERSION = '8761015';
const PREVIOUS_WORKFLOW_FILES = [
  'workflows/index.ts',
  'workflows/composition.ts',
  'src/router/pending-arguments.ts',
  'src/router/task-types.ts',
];

/**
 * The previous version's workflow code, written inside the checkout (under the ignored .data/) so
 * that its imports resolve to this node_modules and the bundler compiles it (it leaves node_modules alone).
 */
function previousWorkflows(): string {
  const folder = path.join(ROOT, '.data', 'previous-workflows', PREVIOUS_VERSION);
  for (const file of PREVIOUS_WORKFLOW_FILES) {
    const text = execFileSync('git', ['show', `${PREVIOUS_VERSION}:${file}`], { cwd: ROOT, encoding: 'utf8' });
    fs.mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    fs.writeFileSync(path.join(folder, file), text);
  }
  return path.join(folder, 'workflows', 'index.ts');
}

/**
 * An upgrade with runs open: a task that the previous version started and that awaits its agent's
 * report ends correctly on the new version's worker. An API process of its own on a task queue of
 * its own, and workers made here, one of each version, with the activities of today.
 */
describe('upgrading the worker while a run is open', () => {
  const stack = testStack();
  const taskQueue = `upgrade-${process.pid}`;
  let api: ServiceProcess;
  let baseUrl: string;
  let server: AgentServer;
  let store: Store;
  let nativeConnection: NativeConnection;
  let client: Client;
  let closeTemporal: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const env = serviceEnv({ ...stack }, { TEMPORAL_TASK_QUEUE: taskQueue, PORT: String(port) });
    api = ServiceProcess.spawn('server.ts', env, path.join(stack.runDir, `${taskQueue}-api.log`));
    server = await AgentServer.start();
    store = await Store.connect(stack.mongoUri, stack.mongoDatabase);
    nativeConnection = await NativeConnection.connect({ address: stack.temporalAddress });
    ({ client, close: closeTemporal } = await connectTemporal());
    await api.waitReady(baseUrl);
  });
  afterAll(async () => {
    await api?.stop();
    await server.close();
    await store?.close();
    await nativeConnection?.close();
    await closeTemporal?.();
  });

  function workerWith(workflows: { workflowBundle: { code: string } } | { workflowsPath: string }): Promise<Worker> {
    const config = loadConfig(serviceEnv({ ...stack }, { TEMPORAL_TASK_QUEUE: taskQueue }));
    const { activities } = createActivities({
      config,
      store,
      logger: createLogger({ logLevel: 'warn' }),
      taskChanges: new TaskChanges({ workerInProcess: true }),
      agents: new RecentAgents(new AgentStore(store, secretBoxOf(config))),
      schemas,
      metrics: createMetrics(),
      temporal: { client },
    });
    return Worker.create({
      connection: nativeConnection,
      namespace: stack.temporalNamespace,
      taskQueue,
      activities,
      ...workflows,
    });
  }

  it('ends a task that the previous version started and left awaiting its report, once the new worker gets the report', async () => {
    const agent = await registerAgent({
      mcpUrl: server.route('accepts', accepts),
    });
    const previous = await workerWith({
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: previousWorkflows(),
        logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
      }),
    });
    let taskId = '';
    await previous.runUntil(async () => {
      const reply = await call('POST', '/tasks', {
        baseUrl,
        apiKey: 'admin',
        body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'across the upgrade' } },
      });
      expect(reply.status).toBe(202);
      taskId = reply.body.taskId;
      expect(await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' })).toMatchObject({
        status: 'pending',
        phase: 'awaiting_agent_report',
      });
    });

    const current = await workerWith({ workflowsPath: require.resolve('../../workflows') });
    await current.runUntil(async () => {
      const reported = await call('POST', `/tasks/${taskId}/result`, {
        baseUrl,
        apiKey: agent.apiKey,
        body: { status: 'completed', result: { after: 'upgrade' } },
      });
      expect(reported.status).toBe(200);
      expect(await waitForTask(taskId)).toMatchObject({
        status: 'completed',
        result: { after: 'upgrade' },
        attempts: 1,
      });
      const handle = client.workflow.getHandle(`task-${taskId}`);
      expect(await handle.result()).toEqual({ tasks: [{ taskId, status: 'completed' }] });
      // The run went on as it began: its call was a local activity, and it took no patch of today's.
      const { events } = await handle.fetchHistory();
      expect((events ?? []).some((event) => event.activityTaskScheduledEventAttributes)).toBe(false);
      expect(
        (events ?? []).filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity'),
      ).toHaveLength(2);
    });
    expect(server.callsTo('accepts')).toHaveLength(1);
  });
});
