import { ADMIN_PRINCIPAL } from '../auth/principal';
import type { Agent } from '../registry/agent';
import type { RecentAgents } from '../registry/recent-agents';
import { UserSchemaCompiler } from '../registry/user-schemas';
import type { IdempotencyClaim } from './idempotency-keys';
import type { TaskIndex } from './task-index';
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

/** A launcher whose index and Temporal fail as told, recording what was undone. */
function launcherFailing(where: 'index' | 'temporal') {
  const undone: string[] = [];
  const index = {
    create: async () => {
      if (where === 'index') throw new Error('index write failed');
    },
    remove: async (taskIds: string[]) => void undone.push(`removed ${taskIds.length} task`),
  } as unknown as TaskIndex;
  const temporal = {
    client: {
      workflow: {
        start: async () => {
          throw new Error('Temporal unavailable');
        },
      },
    },
  } as unknown as TemporalHandle;
  const claim: IdempotencyClaim = {
    claim: async () => null,
    confirm: async () => void undone.push('confirmed'),
    release: async () => void undone.push('released'),
  };
  const launcher = new TaskLauncher({
    agents: { findVisible: async () => agent } as unknown as RecentAgents,
    index,
    temporal,
    schemas: new UserSchemaCompiler(),
    config: { taskQueue: 'tasks', defaultTaskTimeoutMs: 60_000, maxTaskTimeoutMs: 3_600_000, agentCallTimeoutMs: 30_000, callbackSigningSecret: undefined },
  });
  return { launch: () => launcher.launchTask(ADMIN_PRINCIPAL, request, { idempotency: claim }), undone };
}

describe('TaskLauncher, when a launch fails half way', () => {
  it.each([
    ['the task index', 'index' as const, 'index write failed'],
    ['Temporal', 'temporal' as const, 'Temporal unavailable'],
  ])('frees the Idempotency-Key and removes what was indexed when %s fails', async (_what, where, message) => {
    const { launch, undone } = launcherFailing(where);
    await expect(launch()).rejects.toThrow(message);
    expect(undone).toEqual(['removed 1 task', 'released']);
  });
});
