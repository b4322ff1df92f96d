import { MongoServerError } from 'mongodb';
import type { Store } from '../store/mongo';
import type { Agent } from './agent';
import { AgentStore } from './agent-store';

/** An AgentStore over a stand-in collection whose writes match `matched` documents. */
function storeMatching(matched: number) {
  const collection = {
    findOne: async () => (matched ? { version: 2 } : null),
    updateOne: async () => ({ matchedCount: matched }),
    deleteOne: async () => ({ deletedCount: matched }),
    // The claim of a change, in its own collection: always granted here.
    insertOne: async () => ({ acknowledged: true }),
  };
  const agents = new AgentStore({ collection: () => collection } as unknown as Store);
  const heard: string[] = [];
  agents.onChange((agentId) => heard.push(agentId));
  return { agents, heard };
}

const agent = {
  id: 'agent-1',
  name: 'Echo',
  description: 'Echoes',
  capabilities: { tools: [{ name: 'echo', description: 'echo', inputSchema: { type: 'object' } }] },
  sharedWith: [],
  version: 2,
} as unknown as Agent;

describe('AgentStore change listeners', () => {
  it('hear of each write that changed a stored agent', async () => {
    const { agents, heard } = storeMatching(1);
    expect(await agents.replace(agent, 1)).toBe(true);
    await agents.setSigningSecret('agent-1', 'whsec_new');
    expect(await agents.delete('agent-1')).toBe(true);
    expect(heard).toEqual(['agent-1', 'agent-1', 'agent-1']);
  });

  it('hear nothing of a write that matched no agent, such as a replace of an older version', async () => {
    const { agents, heard } = storeMatching(0);
    expect(await agents.replace(agent, 1)).toBe(false);
    await agents.setSigningSecret('agent-1', 'whsec_new');
    expect(await agents.delete('agent-1')).toBe(false);
    expect(heard).toEqual([]);
  });
});

describe('AgentStore.replace under a claim', () => {
  /** Collections where the claim of version 1 is already held since `claimedAt`. */
  function storeWithClaim(claimedAt: Date) {
    const claims = new Map<string, Date>([['agent-1@1', claimedAt]]);
    const collection = {
      insertOne: async ({ _id }: { _id: string }) => {
        if (claims.has(_id)) throw new MongoServerError({ message: 'E11000 duplicate key', code: 11000 });
        claims.set(_id, new Date());
      },
      findOne: async ({ _id }: { _id: string }) => (claims.has(_id) ? { _id, claimedAt: claims.get(_id) } : null),
      deleteOne: async ({ _id }: { _id: string }) => ({ deletedCount: Number(claims.delete(_id)) }),
      updateOne: async () => ({ matchedCount: 1 }),
    };
    return { agents: new AgentStore({ collection: () => collection } as unknown as Store), claims };
  }

  it('refuses a change while another holds the claim of the same version', async () => {
    const { agents, claims } = storeWithClaim(new Date());
    expect(await agents.replace(agent, 1)).toBe(false);
    expect(claims.has('agent-1@1')).toBe(true);
  });

  it('takes over a claim left by a process that died before writing, and frees it after', async () => {
    const { agents, claims } = storeWithClaim(new Date(Date.now() - 60_000));
    expect(await agents.replace(agent, 1)).toBe(true);
    expect(claims.size).toBe(0);
  });
});

describe('AgentStore.findVisible', () => {
  // Capabilities that cannot be parsed show whether a lookup parsed them.
  const privateDocument = { _id: 'agent-1', visibility: 'private', sharedWith: [], owner: { kind: 'service', id: 'owner-key' }, capabilities: '{unparsed' };
  const agents = new AgentStore({ collection: () => ({ findOne: async () => privateDocument }) } as unknown as Store);

  it('judges a private agent before parsing it, so that a stranger\'s lookup costs what an unknown id does', async () => {
    await expect(agents.findVisible({ kind: 'human', id: 'stranger' }, 'agent-1')).resolves.toBeNull();
    await expect(agents.findVisible({ kind: 'human', id: 'owner-key' }, 'agent-1')).resolves.toBeNull();
    await expect(agents.findVisible({ kind: 'service', id: 'owner-key' }, 'agent-1')).rejects.toThrow(SyntaxError);
  });
});
