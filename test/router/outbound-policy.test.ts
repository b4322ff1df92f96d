import fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { notifyCancellationActivity } from '../../activities/notify-cancellation';
import { freePort } from '../../src/embedded/managed-process';
import { RecentAgents } from '../../src/registry/recent-agents';
import { stackAgents } from '../support/database';
import { outboundDispatcher } from '../../src/router/outbound-guard';
import { Store } from '../../src/store/mongo';
import { AgentServer, completes } from '../support/agent-server';
import { agentRegistration, registerAgent } from '../support/agents';
import { serviceEnv } from '../support/global-setup';
import { call, expectError } from '../support/http';
import { ServiceProcess } from '../support/service-process';
import { waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { closedStatus } from '../support/until';
import { withTemporal } from '../support/temporal';

/** What a message about a refused call must not say: how localhost resolved. */
const RESOLVED_LOOPBACK = /127\.0\.0\.1|::1/;

/**
 * The outbound rules as in production (ALLOW_INSECURE_AGENT_URLS and ALLOW_PRIVATE_AGENT_URLS
 * off): a process with the API and a worker of its own task queue, so that the shared service's
 * worker (which allows both) takes none of these tasks. Its calls to the loopback servers here are
 * refused, and must be refused once, for good.
 */
describe('outbound rules as in production', () => {
  const stack = testStack();
  const taskQueue = `outbound-policy-${process.pid}`;
  let service: ServiceProcess;
  let baseUrl: string;
  let receiver: AgentServer;
  /** A URL of the receiver named `localhost`, so that no message may show what that resolved to. */
  let byName: (route: string, scheme?: 'http' | 'https') => string;

  beforeAll(async () => {
    receiver = await AgentServer.start();
    byName = (route, scheme = 'https') => receiver.route(route, completes({ text: 'reached' })).replace(/^http:\/\/127\.0\.0\.1/, `${scheme}://localhost`);
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const dataDir = fs.mkdtempSync(path.join(stack.runDir, `${taskQueue}-`));
    service = ServiceProcess.spawn(
      'start.ts',
      serviceEnv(stack, { PORT: String(port), DATA_DIR: dataDir, TEMPORAL_TASK_QUEUE: taskQueue, ALLOW_INSECURE_AGENT_URLS: 'false', ALLOW_PRIVATE_AGENT_URLS: 'false' }),
      path.join(dataDir, 'service.log'),
    );
    await service.waitReady(baseUrl);
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
  });

  /** An agent registered through this process, so its URLs passed the https rule. */
  async function register(overrides: Record<string, unknown> = {}): Promise<string> {
    const reply = await call('POST', '/agents', { baseUrl, apiKey: 'admin', body: agentRegistration({ mcpUrl: byName('mcp'), chatUrl: byName('chat'), ...overrides }) });
    expect(reply.status).toBe(201);
    return reply.body.agentId;
  }

  describe("a task's callbackUrl must be https", () => {
    let agentId: string;
    beforeAll(async () => {
      agentId = await register();
    });
    const task = (callbackUrl: string) => ({ agentId, operation: 'tools/echo', params: { text: 'x' }, callbackUrl });

    it('answers 400 naming callbackUrl to POST /tasks with an http one', async () => {
      const error = expectError(await call('POST', '/tasks', { baseUrl, apiKey: 'admin', body: task('http://receiver.example.com/done') }), 400, 'VALIDATION_ERROR');
      expect(error).toEqual({ code: 'VALIDATION_ERROR', message: 'callbackUrl must be an https URL', details: [{ path: '/callbackUrl', message: 'must use https' }] });
    });

    it('answers 400 naming the element to POST /tasks/compose with an http one, and starts nothing', async () => {
      const body = [task('https://receiver.example.com/done'), { ...task('HTTP://receiver.example.com/done'), parents: ['0'] }];
      const error = expectError(await call('POST', '/tasks/compose', { baseUrl, apiKey: 'admin', body }), 400, 'VALIDATION_ERROR');
      expect(error).toEqual({ code: 'VALIDATION_ERROR', message: 'Task 1: callbackUrl must be an https URL', details: [{ path: '/1/callbackUrl', message: 'must use https' }] });
    });

    it('accepts an https callbackUrl', async () => {
      expect((await call('POST', '/tasks', { baseUrl, apiKey: 'admin', body: task('https://receiver.example.com/done') })).status).toBe(202);
      expect((await call('POST', '/tasks/compose', { baseUrl, apiKey: 'admin', body: [task('https://receiver.example.com/done')] })).status).toBe(202);
    });
  });

  describe('calls to refused addresses', () => {
    it('fail the task at the first attempt with AGENT_URL_REFUSED, without saying what the name resolved to', async () => {
      const agentId = await register();
      const reply = await call('POST', '/tasks', { baseUrl, apiKey: 'admin', body: { agentId, operation: 'tools/echo', params: { text: 'x' } } });
      expect(reply.status).toBe(202);
      const task = await waitForTask(reply.body.taskId);
      expect(task).toMatchObject({ status: 'failed', error: { code: 'AGENT_URL_REFUSED' }, attempts: 1, attemptErrors: [{ attempt: 1, code: 'AGENT_URL_REFUSED' }] });
      expect(task.error.message).toContain(byName('mcp'));
      expect(JSON.stringify(task)).not.toMatch(RESOLVED_LOOPBACK);
      expect(receiver.callsTo('mcp')).toHaveLength(0);
    });

    it('end completion callbacks at their first attempt, so that none is left to deliver later', async () => {
      const agentId = await register({ callbackUrl: byName('agent-hook') });
      const reply = await call('POST', '/tasks', { baseUrl, apiKey: 'admin', body: { agentId, operation: 'tools/echo', params: { text: 'x' }, callbackUrl: byName('task-hook') } });
      expect(reply.status).toBe(202);
      const { taskId } = reply.body;
      await waitForTask(taskId);
      await withTemporal(async (client) => {
        const workflow = client.workflow.getHandle(`task-${taskId}`);
        // Retried, the callbacks would keep the run open for about ten minutes.
        expect(await closedStatus(workflow, 20_000).catch(() => 'still running')).toBe('COMPLETED');
        const events = (await workflow.fetchHistory()).events ?? [];
        const scheduled = events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverCallback').map((event) => Number(event.eventId));
        expect(scheduled).toHaveLength(2);
        const started = events.filter((event) => scheduled.includes(Number(event.activityTaskStartedEventAttributes?.scheduledEventId)));
        expect(started.map((event) => event.activityTaskStartedEventAttributes?.attempt)).toEqual([1, 1]);
        const failures = events.filter((event) => scheduled.includes(Number(event.activityTaskFailedEventAttributes?.scheduledEventId))).map((event) => event.activityTaskFailedEventAttributes?.failure);
        expect(failures.map((failure) => failure?.applicationFailureInfo?.nonRetryable)).toEqual([true, true]);
        expect(JSON.stringify(failures)).not.toMatch(RESOLVED_LOOPBACK);
      });
      expect(receiver.callsTo('task-hook')).toHaveLength(0);
      expect(receiver.callsTo('agent-hook')).toHaveLength(0);
    });
  });
});

/** The cancellation notice run by itself: no task of this stack ever awaits the report of an agent the guard refuses. */
describe('the cancellation notice to a refused address', () => {
  let receiver: AgentServer;
  let store: Store;
  beforeAll(async () => {
    receiver = await AgentServer.start();
    store = await Store.connect(testStack().mongoUri, testStack().mongoDatabase);
  });
  afterAll(async () => {
    await receiver.close();
    await store.close();
  });

  it('is not retried, and does not say what the name resolved to', async () => {
    const mcpUrl = receiver.route('mcp', completes({})).replace('127.0.0.1', 'localhost');
    const agent = await registerAgent({ mcpUrl });
    const notify = notifyCancellationActivity(new RecentAgents(stackAgents(store)), outboundDispatcher({ allowPrivate: false, connectTimeoutMs: 5_000 }), { callTimeoutMs: 5_000 });
    const notice = new MockActivityEnvironment({ attempt: 1 }).run(notify, { taskId: 'task-1', agentId: agent.agentId });
    await expect(notice).rejects.toMatchObject({ nonRetryable: true, message: expect.stringContaining(mcpUrl) });
    await expect(notice).rejects.toMatchObject({ message: expect.not.stringMatching(RESOLVED_LOOPBACK) });
    expect(receiver.callsTo('mcp')).toHaveLength(0);
  });
});
