import dns from 'node:dns/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { notifyCancellationActivity } from '../../activities/notify-cancellation';
import { RecentAgents } from '../../src/registry/recent-agents';
import { outboundDispatcher } from '../../src/agent-calls/outbound-guard';
import { Store } from '../../src/store/mongo';
import { stackAgents } from '../support/database';
import { AgentServer, completes } from '../support/agent-server';
import { agentRegistration, registerAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { startOwnService, type OwnService } from '../support/own-service';
import { startTask, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { closedStatus } from '../support/until';
import { withTemporal } from '../support/temporal';

/**
 * Every spelling of a loopback, private, link-local or otherwise internal address, through every
 * outbound path of the service (an agent's mcpUrl: the task call and the cancellation notice; a
 * task's callbackUrl; an agent's callbackUrl; chatUrl, which the service never calls), on a service
 * with the outbound rules of production: https required, private destinations refused. The URLs
 * are https, so they pass the registration's rule and reach the address guard, which refuses them
 * before any connection (no TLS handshake is needed for the refusal). A canary listening on
 * 127.0.0.1 and ::1 counts every connection: it must get none. Names must not show what they
 * resolved to.
 */

/** Hosts as a URL writes them; `{port}` is the canary's. */
const LOOPBACK = [
  '127.0.0.1',
  '127.1',
  '127.0.1',
  '127.000.000.001',
  '0177.0.0.1',
  '0x7f.1',
  '0x7f.0.0.1',
  '0x7f000001',
  '2130706433',
  '017700000001',
  '127.255.255.254',
  '0.0.0.0',
  '0',
  '0x0',
  '[::1]',
  '[::]',
  '[0:0:0:0:0:0:0:1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:ffff:7f00:1]',
  // IPv4-compatible (deprecated), SIIT, NAT64 (well-known and local-use prefixes) and 6to4 forms of 127.0.0.1.
  '[::127.0.0.1]',
  '[::7f00:1]',
  '[::ffff:0:127.0.0.1]',
  '[64:ff9b::127.0.0.1]',
  '[64:ff9b:1::7f00:1]',
  '[2002:7f00:1::1]',
];
const NAMES = ['localhost', 'LOCALHOST', 'LocalHost', 'localhost.'];
const PRIVATE = [
  '10.0.0.1',
  '10.255.255.254',
  '172.16.0.1',
  '172.31.255.254',
  '192.168.0.1',
  '192.168.255.254',
  '169.254.169.254',
  '169.254.0.1',
  '100.64.0.1',
  '100.127.255.254',
  '[::ffff:10.0.0.1]',
  '[::ffff:169.254.169.254]',
  '[::a9fe:a9fe]',
  '[fc00::1]',
  '[fd00::2]',
  '[fe80::1]',
  '[fec0::1]',
  '224.0.0.1',
  '255.255.255.255',
  '198.18.0.1',
  '192.0.0.1',
  '240.0.0.1',
];

/** What a refusal's message must not contain for a name: the address it resolved to. */
const RESOLVED_LOOPBACK = /127\.0\.0\.1|::1\b/;

/** A canary HTTP server on 127.0.0.1 and ::1, one port: counts every connection either gets. */
class Canary {
  connections = 0;
  private constructor(
    private readonly servers: http.Server[],
    readonly port: number,
  ) {}

  static async start(): Promise<Canary> {
    for (let attempt = 0; ; attempt++) {
      const v4 = http.createServer((_request, response) => response.end('canary'));
      await new Promise<void>((resolve) => v4.listen(0, '127.0.0.1', resolve));
      const { port } = v4.address() as AddressInfo;
      const v6 = http.createServer((_request, response) => response.end('canary'));
      const bound = await new Promise<boolean>((resolve) => {
        v6.once('error', () => resolve(false));
        v6.listen(port, '::1', () => resolve(true));
      });
      if (!bound && attempt < 5) {
        v4.close();
        continue;
      }
      const canary = new Canary(bound ? [v4, v6] : [v4], port);
      for (const server of canary.servers) server.on('connection', () => canary.connections++);
      return canary;
    }
  }

  close(): Promise<void> {
    return Promise.all(this.servers.map((server) => new Promise((resolve) => server.close(resolve)))).then(
      () => undefined,
    );
  }
}

interface Case {
  host: string;
  url: (path: string) => string;
  /** A name: what it resolved to must not show. */
  name: boolean;
}

/**
 * Every host with the canary's port; loopback spellings also with userinfo and with https's default
 * port. Only the `names` that resolve here: one that does not never reaches the guard's check of its
 * address (a DNS failure, retried as such).
 */
function cases(port: number, names: string[]): Case[] {
  const withPort = [...LOOPBACK, ...names, ...PRIVATE].map((host) => ({
    host: `${host}:${port}`,
    name: names.includes(host),
  }));
  const loopbackVariants = [...LOOPBACK, ...names].flatMap((host) => [
    { host: `user:secret@${host}:${port}`, name: names.includes(host) },
    { host, name: names.includes(host) },
  ]);
  return [...withPort, ...loopbackVariants].map(({ host, name }) => ({
    host,
    name,
    url: (path: string) => `https://${host}/${path}`,
  }));
}

describe('SSRF matrix: outbound rules as in production', () => {
  let service: OwnService;
  let canary: Canary;
  let matrix: Case[];
  /** Per case: the agent and task it led to, or the registration's refusal. */
  const outcomes = new Map<string, { agentId?: string; taskId?: string; refusedAt?: string }>();
  /** Per case, the same through an MCP agent: its capability import's answer, and its task. */
  const mcpOutcomes = new Map<string, { importReply?: { status: number; body: any }; taskId?: string }>();

  beforeAll(async () => {
    canary = await Canary.start();
    const resolving = await Promise.all(
      NAMES.map((name) =>
        dns.lookup(name).then(
          () => name,
          () => undefined,
        ),
      ),
    );
    matrix = cases(
      canary.port,
      resolving.filter((name): name is string => name !== undefined),
    );
    // The default call timeout (30 s): a refusal comes before any connection, but on a busy machine
    // one of 200 calls at once can take seconds to be refused, and must not time out meanwhile.
    service = await startOwnService('ssrf-matrix', {
      ALLOW_INSECURE_AGENT_URLS: 'false',
      ALLOW_PRIVATE_AGENT_URLS: 'false',
    });
    const options = { baseUrl: service.baseUrl, apiKey: 'admin' };
    await Promise.all(
      matrix.map(async (spelling) => {
        const registration = agentRegistration({
          mcpUrl: spelling.url('mcp'),
          chatUrl: spelling.url('chat'),
          callbackUrl: spelling.url('agent-hook'),
        });
        const registered = await call('POST', '/agents', { ...options, body: registration });
        if (registered.status !== 201) {
          expectError(registered, 400, 'VALIDATION_ERROR');
          outcomes.set(spelling.host, { refusedAt: 'registration' });
          return;
        }
        const { agentId } = registered.body;
        // One attempt: a destination the guard let through shows as AGENT_UNREACHABLE, not a retry.
        const task = {
          agentId,
          operation: 'tools/echo',
          params: { text: 'x' },
          callbackUrl: spelling.url('task-hook'),
          retry: { maxAttempts: 1 },
        };
        const created = await call('POST', '/tasks', { ...options, body: task });
        if (created.status !== 202) {
          expectError(created, 400, 'VALIDATION_ERROR');
          outcomes.set(spelling.host, { agentId, refusedAt: 'task' });
          return;
        }
        outcomes.set(spelling.host, { agentId, taskId: created.body.taskId });

        const mcpRegistration: Record<string, unknown> = { ...registration, protocol: 'mcp', callbackUrl: undefined };
        const importing = { ...mcpRegistration, capabilities: undefined };
        const importReply = await call('POST', '/agents', { ...options, body: importing });
        const mcpAgent = await call('POST', '/agents', { ...options, body: mcpRegistration });
        const mcpTask = await call('POST', '/tasks', {
          ...options,
          body: { ...task, agentId: mcpAgent.body.agentId, callbackUrl: undefined },
        });
        mcpOutcomes.set(spelling.host, { importReply, taskId: mcpTask.body.taskId });
      }),
    );
  });

  afterAll(async () => {
    await service?.stop();
    await canary?.close();
  });

  it('reaches the guard with most spellings, rather than stopping at the registration, but for credentials', () => {
    // A URL with a user name or password is refused when given, whatever its host: it would show in messages.
    const withCredentials = matrix.filter((spelling) => spelling.host.includes('@'));
    const others = matrix.filter((spelling) => !spelling.host.includes('@'));
    const reached = others.filter((spelling) => outcomes.get(spelling.host)?.taskId !== undefined).length;
    expect(reached).toBeGreaterThan(others.length * 0.9);
    expect(withCredentials.filter((spelling) => outcomes.get(spelling.host)?.refusedAt !== 'registration')).toEqual([]);
  });

  it('fails each task at its first call with AGENT_URL_REFUSED, without showing what a name resolved to', async () => {
    const wrong: string[] = [];
    for (const spelling of matrix) {
      const { taskId } = outcomes.get(spelling.host)!;
      if (!taskId) continue;
      const task = await waitForTask(taskId, { baseUrl: service.baseUrl });
      if (
        task.status !== 'failed' ||
        task.error?.code !== 'AGENT_URL_REFUSED' ||
        task.attempts !== 1 ||
        task.attemptErrors?.length !== 1
      )
        wrong.push(`${spelling.host}: ${JSON.stringify(task)}`);
      if (spelling.name && RESOLVED_LOOPBACK.test(JSON.stringify(task)))
        wrong.push(`${spelling.host} shows its address: ${JSON.stringify(task.error)}`);
    }
    expect(wrong).toEqual([]);
  });

  it("refuses the task's and the agent's completion callbacks once, for good, without showing what a name resolved to", async () => {
    // One workflow after the other: by the time the first has closed, most of the others have too.
    const wrong = await withTemporal(async (client) => {
      const problems: string[] = [];
      for (const spelling of matrix) {
        const { taskId } = outcomes.get(spelling.host)!;
        if (!taskId) continue;
        for (const problem of await callbackProblems(client, taskId, spelling.name))
          problems.push(`${spelling.host}: ${problem}`);
      }
      return problems;
    });
    expect(wrong).toEqual([]);
  });

  it('refuses the cancellation notice to each mcpUrl, not retried', async () => {
    const { mongoUri, mongoDatabase } = testStack();
    const store = await Store.connect(mongoUri, mongoDatabase);
    try {
      const notify = notifyCancellationActivity(
        new RecentAgents(stackAgents(store)),
        outboundDispatcher({ allowPrivate: false, connectTimeoutMs: 30_000 }),
        { callTimeoutMs: 30_000 },
      );
      const wrong: string[] = [];
      for (const spelling of matrix) {
        const { agentId } = outcomes.get(spelling.host)!;
        if (!agentId) continue;
        const failure = await new MockActivityEnvironment({ attempt: 1 })
          .run(notify, { taskId: `notice-${agentId}`, agentId })
          .then(
            () => undefined,
            (error: any) => error,
          );
        if (
          failure?.nonRetryable !== true ||
          !/refused/.test(failure.message) ||
          (spelling.name && RESOLVED_LOOPBACK.test(failure.message))
        ) {
          wrong.push(
            `${spelling.host}: ${failure ? `${failure.nonRetryable ? 'final' : 'retried'}: ${failure.message}` : 'delivered'}`,
          );
        }
      }
      expect(wrong).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('refuses to read the capabilities of an MCP server at each spelling, with 422, without showing the address', () => {
    const wrong = matrix.flatMap((spelling) => {
      const reply = mcpOutcomes.get(spelling.host)?.importReply;
      if (!reply) return [];
      // Credentials in an MCP agent's URL are refused before any call: fetch could not send them.
      if (spelling.host.includes('@'))
        return reply.status === 400 && /credentials/.test(reply.body.error.message)
          ? []
          : [`${spelling.host}: ${reply.status}`];
      const refused =
        reply.status === 422 &&
        reply.body.error.code === 'CAPABILITY_IMPORT_FAILED' &&
        /refused|does not call/.test(reply.body.error.message) &&
        !(spelling.name && RESOLVED_LOOPBACK.test(reply.body.error.message));
      return refused ? [] : [`${spelling.host}: ${reply.status} ${JSON.stringify(reply.body)}`];
    });
    expect(wrong).toEqual([]);
  });

  it('fails each task of an MCP agent at its first call with AGENT_URL_REFUSED', async () => {
    const wrong: string[] = [];
    for (const spelling of matrix) {
      const taskId = mcpOutcomes.get(spelling.host)?.taskId;
      if (!taskId) continue;
      const task = await waitForTask(taskId, { baseUrl: service.baseUrl });
      if (task.status !== 'failed' || task.error?.code !== 'AGENT_URL_REFUSED' || task.attempts !== 1)
        wrong.push(`${spelling.host}: ${JSON.stringify(task)}`);
      if (spelling.name && RESOLVED_LOOPBACK.test(JSON.stringify(task)))
        wrong.push(`${spelling.host} shows its address: ${JSON.stringify(task.error)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('sent nothing to the canary, by any path (chatUrl included)', () => {
    expect(canary.connections).toBe(0);
  });

  describe("a task's callbackUrl must be https", () => {
    let agentId: string;
    const options = () => ({ baseUrl: service.baseUrl, apiKey: 'admin' });
    beforeAll(async () => {
      agentId = [...outcomes.values()].find((outcome) => outcome.agentId)!.agentId!;
    });
    const task = (callbackUrl: string) => ({ agentId, operation: 'tools/echo', params: { text: 'x' }, callbackUrl });

    it('answers 400 naming callbackUrl to POST /tasks with an http one', async () => {
      const error = expectError(
        await call('POST', '/tasks', { ...options(), body: task('http://receiver.example.com/done') }),
        400,
        'VALIDATION_ERROR',
      );
      expect(error).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'callbackUrl must be an https URL',
        details: [{ path: '/callbackUrl', message: 'must use https' }],
      });
    });

    it('answers 400 naming the element to POST /tasks/compose with an http one, and starts nothing', async () => {
      const body = [
        task('https://receiver.example.com/done'),
        { ...task('HTTP://receiver.example.com/done'), parents: ['0'] },
      ];
      const error = expectError(await call('POST', '/tasks/compose', { ...options(), body }), 400, 'VALIDATION_ERROR');
      expect(error).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'Task 1: callbackUrl must be an https URL',
        details: [{ path: '/1/callbackUrl', message: 'must use https' }],
      });
    });

    it('accepts an https callbackUrl', async () => {
      expect(
        (await call('POST', '/tasks', { ...options(), body: task('https://receiver.example.com/done') })).status,
      ).toBe(202);
      expect(
        (await call('POST', '/tasks/compose', { ...options(), body: [task('https://receiver.example.com/done')] }))
          .status,
      ).toBe(202);
    });
  });
});

/**
 * What is wrong with the completion callbacks of a task whose URLs the guard must refuse: both
 * deliveries must fail at their first attempt, non-retryable (retried, they would keep the run open
 * for about ten minutes and deliver once a restart allowed private addresses), saying nothing of a
 * name's address.
 */
async function callbackProblems(client: Client, taskId: string, name: boolean): Promise<string[]> {
  const workflow = client.workflow.getHandle(`task-${taskId}`);
  const closed = await closedStatus(workflow).catch(() => 'still running');
  if (closed !== 'COMPLETED') return [`run ${closed}`];
  const events = (await workflow.fetchHistory()).events ?? [];
  const scheduled = events
    .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverCallback')
    .map((event) => Number(event.eventId));
  const attempts = events
    .filter((event) => scheduled.includes(Number(event.activityTaskStartedEventAttributes?.scheduledEventId)))
    .map((event) => event.activityTaskStartedEventAttributes?.attempt);
  const failures = events
    .filter((event) => scheduled.includes(Number(event.activityTaskFailedEventAttributes?.scheduledEventId)))
    .map((event) => event.activityTaskFailedEventAttributes?.failure);
  const problems: string[] = [];
  if (scheduled.length !== 2) problems.push(`${scheduled.length} callbacks scheduled`);
  if (attempts.some((attempt) => attempt !== 1)) problems.push(`attempts ${JSON.stringify(attempts)}`);
  if (
    failures.length !== 2 ||
    failures.some(
      (failure) => failure?.applicationFailureInfo?.nonRetryable !== true || !/refused/.test(failure?.message ?? ''),
    )
  ) {
    problems.push(`failures ${JSON.stringify(failures.map((failure) => failure?.message))}`);
  }
  if (name && RESOLVED_LOOPBACK.test(JSON.stringify(failures))) problems.push('a failure shows the address');
  return problems;
}

/**
 * The outbound calls follow no redirect: an agent and receivers that answer 307 towards the canary
 * (on the shared test stack, whose guard allows loopback, so that the redirect itself is what is
 * tested) never make the service call the canary.
 */
describe('redirects', () => {
  let canary: Canary;
  let redirector: http.Server;
  let redirects = 0;
  beforeAll(async () => {
    canary = await Canary.start();
    redirector = http.createServer((_request, response) => {
      redirects++;
      response.writeHead(307, { location: `http://127.0.0.1:${canary.port}/stolen` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await canary.close();
    await new Promise((resolve) => redirector.close(resolve));
  });

  it('are not followed from an mcpUrl or a callback URL', async () => {
    const url = (path: string) => `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/${path}`;
    const receiver = await AgentServer.start();
    try {
      const agent = await registerAgent({ mcpUrl: url('mcp'), callbackUrl: url('agent-hook') });
      const taskId = await startTask({
        agentId: agent.agentId,
        operation: 'tools/echo',
        params: { text: 'x' },
        callbackUrl: url('task-hook'),
        retry: { maxAttempts: 1 },
      });
      const task = await waitForTask(taskId);
      expect(task).toMatchObject({ status: 'failed', error: { code: 'AGENT_PROTOCOL_ERROR' } });
      await withTemporal((client) => closedStatus(client.workflow.getHandle(`task-${taskId}`)));
      expect(redirects).toBe(3);
      expect(canary.connections).toBe(0);
      // The same service does reach a loopback receiver that answers: the canary's silence is the redirect's.
      const reached = await registerAgent({ mcpUrl: receiver.route('mcp', completes({ text: 'x' })) });
      const direct = await startTask({ agentId: reached.agentId, operation: 'tools/echo', params: { text: 'x' } });
      expect((await waitForTask(direct)).status).toBe('completed');

      // An MCP agent's transport follows no redirect to another origin either.
      const mcpAgent = await registerAgent({ protocol: 'mcp', mcpUrl: url('mcp') });
      const mcpTask = await startTask({
        agentId: mcpAgent.agentId,
        operation: 'tools/echo',
        params: { text: 'x' },
        retry: { maxAttempts: 1 },
      });
      expect((await waitForTask(mcpTask)).status).toBe('failed');
      expect(canary.connections).toBe(0);
    } finally {
      await receiver.close();
    }
  });
});
