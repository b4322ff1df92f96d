import { ServiceError } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';
import { ADMIN_PRINCIPAL } from '../auth/principal';
import type { Agent } from '../registry/agent';
import type { RecentAgents } from '../registry/recent-agents';
import { UserSchemaCompiler } from '../registry/user-schemas';
import type { IdempotencyClaim } from './idempotency-keys';
import type { NewTask, TaskIndex } from './task-index';
import { TaskLauncher } from './task-launcher';
import type { TemporalHandle } from './temporal-client';

const agent = {
  id: 'agent-1',
  name: 'Echo',
  visibility: 'public',
  sharedWith: [],
  version: 1,
  capabilities: { tools: [{ name: 'echo', description: 'echoes', inputSchema: { type: 'object' } }] },
} as unknown as Agent;
const request = { agentId: agent.id, operation: 'tools/echo', params: { text: 'hi' } };

/** A gRPC failure as the Temporal client reports it: a ServiceError whose cause carries the status code. */
const grpcFailure = (code: number, details: string) => new ServiceError(`gRPC status ${code}`, { cause: Object.assign(new Error(details), { code, details, metadata: {} }) });
const DEADLINE_EXCEEDED = 4;
const UNAVAILABLE = 14;

/**
 * A launcher on stand-ins: an index in memory, and a Temporal whose start and describe behave as
 * told, recording what the launcher did to the idempotency claim and the index.
 */
function launcherWith({ indexFails = false, start = async () => undefined, describe = async () => ({}) }: { indexFails?: boolean; start?: (workflowId: string) => Promise<void>; describe?: (workflowId: string) => Promise<unknown> }) {
  const done: string[] = [];
  const indexed = new Map<string, NewTask>();
  const index = {
    create: async (_principal: unknown, tasks: NewTask[]) => {
      if (indexFails) throw new Error('index write failed');
      for (const task of tasks) indexed.set(task._id, task);
    },
    remove: async (taskIds: string[]) => {
      for (const taskId of taskIds) indexed.delete(taskId);
      done.push(`removed ${taskIds.length} task`);
    },
  } as unknown as TaskIndex;
  const temporal = {
    client: {
      workflow: {
        start: async (_type: string, { workflowId }: { workflowId: string }) => start(workflowId),
        getHandle: (workflowId: string) => ({ describe: () => describe(workflowId) }),
      },
    },
  } as unknown as TemporalHandle;
  const claim: IdempotencyClaim = {
    claim: async () => null,
    confirm: async () => void done.push('confirmed'),
    release: async () => void done.push('released'),
  };
  const launcher = new TaskLauncher({
    agents: { findVisible: async () => agent } as unknown as RecentAgents,
    index,
    temporal,
    schemas: new UserSchemaCompiler(),
    config: { taskQueue: 'tasks', defaultTaskTimeoutMs: 60_000, maxTaskTimeoutMs: 3_600_000, agentCallTimeoutMs: 30_000, callbackSigningSecret: undefined, allowInsecureAgentUrls: false },
  });
  return { launch: () => launcher.launchTask(ADMIN_PRINCIPAL, request, { idempotency: claim }), done, indexed };
}

/** Temporal as it is after a start that failed before the server created the workflow. */
const notStarted = async (workflowId: string) => {
  throw new WorkflowNotFoundError('workflow not found', workflowId, undefined);
};

describe('TaskLauncher, when a launch fails half way', () => {
  it('frees the Idempotency-Key and removes what it may have indexed when the task index fails', async () => {
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
    ['a retry of it was told that it already runs', (workflowId: string) => new WorkflowExecutionAlreadyStartedError('Workflow execution already started', workflowId, 'compositionWorkflow')],
  ])('keeps the index records, confirms the Idempotency-Key and answers the ids when %s', async (_how, failure) => {
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
  });

  it('keeps the index records and the Idempotency-Key, and answers 503, when Temporal cannot say whether it started', async () => {
    const { launch, done, indexed } = launcherWith({
      start: async () => {
        throw grpcFailure(DEADLINE_EXCEEDED, 'Deadline exceeded');
      },
      describe: async () => {
        throw grpcFailure(UNAVAILABLE, 'connection refused');
      },
    });
    const error = await launch().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ status: 503, code: 'UNAVAILABLE', details: { taskIds: [...indexed.keys()] }, headers: { 'Retry-After': '1' } });
    expect((error as Error).message).toMatch(/could not tell whether it started after all; its tasks are kept: send the request again with the same Idempotency-Key$/);
    expect(indexed.size).toBe(1);
    expect(done).toEqual([]);
  });
});
