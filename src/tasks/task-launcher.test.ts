import pino from 'pino';
import { ServiceError } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';
import { ADMIN_PRINCIPAL } from '../auth/principal';
import type { Agent } from '../registry/agent';
import type { RecentAgents } from '../registry/recent-agents';
import { CheckPool } from '../user-schemas/check-pool';
import type { IdempotencyClaim, LaunchedIds, LaunchTakeover } from './idempotency-keys';
import type { NewTask } from './task-document';
import type { TaskStore } from './task-store';
import { TaskLauncher } from './task-launcher';
import type { TemporalHandle } from './temporal-client';
import type { CompositionInput, TaskRequest } from '../../workflows/task-types';

/** Schema checks off the event loop, as the service makes them: one pool for the file. */
const schemas = new CheckPool({ threads: 1, timeoutMs: 10_000 });
afterAll(() => schemas.close());

const agent = {
  id: 'agent-1',
  name: 'Echo',
  visibility: 'public',
  sharedWith: [],
  version: 1,
  capabilities: {
    tools: [
      {
        name: 'echo',
        description: 'echoes',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      },
    ],
  },
} as unknown as Agent;
const request = { agentId: agent.id, operation: 'tools/echo', params: { text: 'hi' } };

/** A gRPC failure as the Temporal client reports it: a ServiceError whose cause carries the status code. */
const grpcFailure = (code: number, details: string) =>
  new ServiceError(`gRPC status ${code}`, {
    cause: Object.assign(new Error(details), { code, details, metadata: {} }),
  });
const DEADLINE_EXCEEDED = 4;
const UNAVAILABLE = 14;

/**
 * A launcher on stand-ins: an index in memory, an idempotency claim in memory, and a Temporal whose
 * start and describe behave as told, recording what the launcher did to the claim and the task store.
 * Each `launch()` sends the same request with the same key, so the second is a repeat; the claim
 * answers a repeat at once, as when the first request's wait bound has passed. `stallAt` makes the
 * first launch stop for good at that step, as when its process is killed there.
 */
function launcherWith({
  indexFails = false,
  start = async () => undefined,
  describe = async () => ({}),
  stallAt,
  takenOverBy,
}: {
  indexFails?: boolean;
  start?: (workflowId: string) => Promise<void>;
  describe?: (workflowId: string) => Promise<unknown>;
  stallAt?: 'index' | 'start';
  /** Who took the launch over before anyone asked: a finish or undo that won the race. */
  takenOverBy?: LaunchTakeover;
}) {
  const done: string[] = [];
  const started: CompositionInput[] = [];
  const indexed = new Map<string, NewTask>();
  const stalled = new Set<string>();
  const stall = async (step: 'index' | 'start') => {
    if (stallAt !== step || stalled.has(step)) return;
    stalled.add(step);
    await new Promise(() => undefined);
  };
  const taskStore = {
    create: async (_principal: unknown, tasks: NewTask[]) => {
      await stall('index');
      if (indexFails) throw new Error('index write failed');
      for (const task of tasks) indexed.set(task._id, task);
    },
    remove: async (taskIds: string[]) => {
      for (const taskId of taskIds) indexed.delete(taskId);
      done.push(`removed ${taskIds.length} task`);
    },
  } as unknown as TaskStore;
  const temporal = {
    client: {
      workflow: {
        start: async (_type: string, { workflowId, args }: { workflowId: string; args: [CompositionInput] }) => {
          started.push(args[0]);
          await stall('start');
          return start(workflowId);
        },
        getHandle: (workflowId: string) => ({ describe: () => describe(workflowId) }),
      },
    },
  } as unknown as TemporalHandle;
  let first: { ids: LaunchedIds; launch: string; started: boolean } | undefined;
  const takeovers = new Map<string, LaunchTakeover>();
  const claim: IdempotencyClaim = {
    claim: async (ids, launch) => {
      if (!first) {
        first = { ids, launch: JSON.stringify(launch), started: false };
        return null;
      }
      return { ids: first.ids, started: first.started, launch: JSON.parse(first.launch) };
    },
    confirm: async () => {
      if (first) first.started = true;
      done.push('confirmed');
    },
    takeOver: async (ids, by) => {
      if (!takeovers.has(ids.taskIds[0])) takeovers.set(ids.taskIds[0], takenOverBy ?? by);
      return takeovers.get(ids.taskIds[0]) === by;
    },
    release: async () => {
      first = undefined;
      done.push('released');
    },
  };
  const launcher = new TaskLauncher({
    agents: { findVisible: async () => agent } as unknown as RecentAgents,
    taskStore,
    temporal,
    schemas,
    logger: pino({ level: 'silent' }),
    config: {
      taskQueue: 'tasks',
      defaultTaskTimeoutMs: 60_000,
      maxTaskTimeoutMs: 3_600_000,
      maxCompositionSize: 100,
      agentCallTimeoutMs: 30_000,
      callbackSigningSecret: undefined,
      allowInsecureAgentUrls: false,
      maxTaskDepth: 8,
    },
  });
  return {
    launch: () => launcher.launchTask(ADMIN_PRINCIPAL, request, { idempotency: claim }),
    compose: (requests: TaskRequest[]) => launcher.launchComposition(ADMIN_PRINCIPAL, requests),
    done,
    indexed,
    started,
  };
}

/** Temporal as it is after a start that failed before the server created the workflow. */
const notStarted = async (workflowId: string) => {
  throw new WorkflowNotFoundError('workflow not found', workflowId, undefined);
};

describe('TaskLauncher, when a launch fails half way', () => {
  it('frees the Idempotency-Key and removes what it may have stored when the task store fails', async () => {
    const { launch, done, indexed } = launcherWith({ indexFails: true });
    await expect(launch()).rejects.toThrow('index write failed');
    expect(done).toEqual(['removed 1 task', 'released']);
    expect(indexed.size).toBe(0);
  });

  it('frees the Idempotency-Key and removes what was indexed when Temporal did not start the workflow', async () => {
    const { launch, done, indexed } = launcherWith({
      start: async () => {
        throw grpcFailure(UNAVAILABLE, 'connection refused');
      },
      describe: notStarted,
    });
    await expect(launch()).rejects.toThrow('gRPC status 14');
    expect(done).toEqual(['removed 1 task', 'released']);
    expect(indexed.size).toBe(0);
  });
});

describe('TaskLauncher, when the start fails but the workflow runs', () => {
  it.each([
    ['its deadline passed after the server started it', grpcFailure(DEADLINE_EXCEEDED, 'Deadline exceeded')],
    [
      'a retry of it was told that it already runs',
      (workflowId: string) =>
        new WorkflowExecutionAlreadyStartedError(
          'Workflow execution already started',
          workflowId,
          'compositionWorkflow',
        ),
    ],
  ])(
    'keeps the task store records, confirms the Idempotency-Key and answers the ids when %s',
    async (_how, failure) => {
      const running = new Set<string>();
      const { launch, done, indexed } = launcherWith({
        start: async (workflowId) => {
          running.add(workflowId);
          throw typeof failure === 'function' ? failure(workflowId) : failure;
        },
        describe: async (workflowId) => {
          if (!running.has(workflowId)) return notStarted(workflowId);
          return { status: { name: 'RUNNING' } };
        },
      });
      const taskId = await launch();
      expect(running).toEqual(new Set([`task-${taskId}`]));
      expect([...indexed.keys()]).toEqual([taskId]);
      expect(done).toEqual(['confirmed']);
    },
  );

  it('keeps the task store records and the Idempotency-Key, and answers 503, when Temporal cannot say whether it started', async () => {
    const { launch, done, indexed } = launcherWith({
      start: async () => {
        throw grpcFailure(DEADLINE_EXCEEDED, 'Deadline exceeded');
      },
      describe: async () => {
        throw grpcFailure(UNAVAILABLE, 'connection refused');
      },
    });
    const error = await launch().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({
      status: 503,
      code: 'UNAVAILABLE',
      details: { taskIds: [...indexed.keys()] },
      headers: { 'Retry-After': '1' },
    });
    expect((error as Error).message).toMatch(
      /could not tell whether it started after all; its tasks are kept: send the request again with the same Idempotency-Key$/,
    );
    expect(indexed.size).toBe(1);
    expect(done).toEqual([]);
  });
});

/** Temporal with REJECT_DUPLICATE: one start per workflow id, ever; the ids it started. */
function temporalOnce() {
  const started: string[] = [];
  return {
    started,
    start: async (workflowId: string) => {
      if (started.includes(workflowId))
        throw new WorkflowExecutionAlreadyStartedError(
          'Workflow execution already started',
          workflowId,
          'compositionWorkflow',
        );
      started.push(workflowId);
    },
    describe: async (workflowId: string) =>
      started.includes(workflowId) ? { status: { name: 'RUNNING' } } : notStarted(workflowId),
  };
}

/** Lets a stalled launch reach its stall. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('TaskLauncher, when a repeat finds a launch its first request did not finish', () => {
  it.each([
    ['after the claim, before the task store records', 'index' as const],
    ['after the task store records, before the workflow started', 'start' as const],
  ])(
    'writes what is missing, starts the workflow and answers the first ids when the first request stopped %s',
    async (_when, stallAt) => {
      const temporal = temporalOnce();
      const { launch, done, indexed } = launcherWith({ ...temporal, stallAt });
      void launch();
      await settle();
      expect(temporal.started).toEqual([]);
      const taskId = await launch();
      expect(temporal.started).toEqual([`task-${taskId}`]);
      expect([...indexed.keys()]).toEqual([taskId]);
      expect(indexed.get(taskId)).toMatchObject({ agentId: agent.id, operation: 'tools/echo', params: request.params });
      expect(done).toEqual(['confirmed']);
      // A later repeat finds it confirmed and starts nothing more.
      expect(await launch()).toBe(taskId);
      expect(temporal.started).toHaveLength(1);
    },
  );

  it('starts nothing again when the workflow started but the first request stopped before confirming it', async () => {
    const temporal = temporalOnce();
    const { launch, done, indexed } = launcherWith({
      ...temporal,
      // The first request's start reaches Temporal, and then its process ends.
      start: async (workflowId) => {
        await temporal.start(workflowId);
        if (temporal.started.length === 1) await new Promise(() => undefined);
      },
    });
    void launch();
    await settle();
    const taskId = await launch();
    expect(temporal.started).toEqual([`task-${taskId}`]);
    expect([...indexed.keys()]).toEqual([taskId]);
    expect(done).toEqual(['confirmed']);
  });

  it('answers 503 and starts nothing when the first request undid its launch before the repeat could take it over', async () => {
    const temporal = temporalOnce();
    const { launch, done } = launcherWith({ ...temporal, stallAt: 'start', takenOverBy: 'undo' });
    void launch();
    await settle();
    const error = await launch().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ status: 503, code: 'UNAVAILABLE', headers: { 'Retry-After': '1' } });
    expect(temporal.started).toEqual([]);
    expect(done).toEqual([]);
  });

  it('keeps the tasks and the key, and answers 503, when its launch fails after a repeat took it over', async () => {
    const { launch, done, indexed } = launcherWith({ indexFails: true, takenOverBy: 'finish' });
    const error = await launch().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({
      status: 503,
      code: 'UNAVAILABLE',
      details: { taskIds: [expect.any(String)] },
      headers: { 'Retry-After': '1' },
    });
    expect((error as Error).message).toMatch(/a repeat with the same Idempotency-Key is starting its tasks/);
    expect(indexed.size).toBe(0);
    expect(done).toEqual([]);
  });
});

describe('TaskLauncher, planning a map', () => {
  const source = { taskId: '0', field: 'hits' };
  const mapOf = (forEach: TaskRequest['forEach'], params: Record<string, unknown>): TaskRequest[] => [
    request,
    { ...request, parents: ['0'], forEach, params },
  ];

  it('settles forEach with the defaults of maxConcurrency and onItemFailure', async () => {
    const { compose, started } = launcherWith({});
    await compose(mapOf({ source }, { text: { source: { item: true } } }));
    expect(started[0].tasks[1].forEach).toEqual({ source, maxConcurrency: 10, onItemFailure: 'fail' });
    expect(started[0].tasks[0].forEach).toBeUndefined();
  });

  it('keeps the options given', async () => {
    const { compose, started } = launcherWith({});
    await compose(mapOf({ source, maxConcurrency: 3, onItemFailure: 'continue' }, { text: 'hi' }));
    expect(started[0].tasks[1].forEach).toEqual({ source, maxConcurrency: 3, onItemFailure: 'continue' });
  });

  it('leaves params with item arguments to be checked per item, at run time', async () => {
    const { compose, started } = launcherWith({});
    const params = { text: { source: { item: true, field: 'title' } } };
    // The echo tool wants a string at "text": the item argument is not one yet.
    await compose(mapOf({ source }, params));
    expect(started[0].tasks[1].params).toEqual(params);
  });
});
