import { randomBytes } from 'node:crypto';
import { MongoServerError } from 'mongodb';
import { SecretBox } from '../auth/secret-box';
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
  const agents = new AgentStore({ collection: () => collection } as unknown as Store, new SecretBox(randomBytes(32)));
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
    return {
      agents: new AgentStore({ collection: () => collection } as unknown as Store, new SecretBox(randomBytes(32))),
      claims,
    };
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
  const privateDocument = {
    _id: 'agent-1',
    visibility: 'private',
    sharedWith: [],
    owner: { kind: 'service', id: 'owner-key' },
    capabilities: '{unparsed',
  };
  const agents = new AgentStore(
    { collection: () => ({ findOne: async () => privateDocument }) } as unknown as Store,
    new SecretBox(randomBytes(32)),
  );

  it("judges a private agent before parsing it, so that a stranger's lookup costs what an unknown id does", async () => {
    await expect(agents.findVisible({ kind: 'human', id: 'stranger' }, 'agent-1')).resolves.toBeNull();
    await expect(agents.findVisible({ kind: 'human', id: 'owner-key' }, 'agent-1')).resolves.toBeNull();
    await expect(agents.findVisible({ kind: 'service', id: 'owner-key' }, 'agent-1')).rejects.toThrow(SyntaxError);
  });
});

describe('AgentStore.sealStoredSecrets', () => {
  const [previousKey, currentKey] = [randomBytes(32), randomBytes(32)];
  const secretOf = (agentId: string) => `whsec_${Buffer.from(agentId.padEnd(32, '.')).toString('base64')}`;
  const contextOf = (agentId: string) => `agents/${agentId}/signingSecret`;

  /** An AgentStore over stand-in collections holding `stored` (agentId → stored signingSecret), recording the writes. */
  function storeHolding(stored: Record<string, string>) {
    const writes: Array<{ _id: string; from: string; to: string }> = [];
    const collection = {
      find: () => ({
        toArray: async () => Object.entries(stored).map(([_id, signingSecret]) => ({ _id, signingSecret, version: 1 })),
      }),
      updateOne: async (
        filter: { _id: string; signingSecret: string },
        update: { $set: { signingSecret: string } },
      ) => {
        writes.push({ _id: filter._id, from: filter.signingSecret, to: update.$set.signingSecret });
        return { matchedCount: 1 };
      },
      insertOne: async () => ({ acknowledged: true }),
      deleteOne: async () => ({ deletedCount: 1 }),
    };
    return {
      agents: new AgentStore(
        { collection: () => collection } as unknown as Store,
        new SecretBox(currentKey, [previousKey]),
      ),
      writes,
    };
  }

  it("seals plaintext secrets and re-seals those of a previous key, leaving the current key's alone", async () => {
    const current = new SecretBox(currentKey);
    const stored = {
      plain: secretOf('plain'),
      previous: new SecretBox(previousKey).seal(secretOf('previous'), contextOf('previous')),
      current: current.seal(secretOf('current'), contextOf('current')),
    };
    const { agents, writes } = storeHolding(stored);
    expect(await agents.sealStoredSecrets()).toEqual({ sealed: 2, leftBusy: 0 });
    expect(writes.map(({ _id, from }) => [_id, from])).toEqual([
      ['plain', stored.plain],
      ['previous', stored.previous],
    ]);
    for (const { _id, to } of writes) {
      expect(current.sealedWithCurrentKey(to)).toBe(true);
      expect(current.open(to, contextOf(_id))).toBe(secretOf(_id));
    }
  });

  it('stops before writing anything when a secret was sealed with a key it lacks', async () => {
    const stranger = new SecretBox(randomBytes(32));
    const { agents, writes } = storeHolding({
      plain: secretOf('plain'),
      foreign: stranger.seal(secretOf('foreign'), contextOf('foreign')),
    });
    await expect(agents.sealStoredSecrets()).rejects.toThrow(
      new RegExp(`agent foreign does not open: .*${stranger.currentKeyId}.*SECRETS_KEY`),
    );
    expect(writes).toEqual([]);
  });

  it('re-seals MCP headers sealed with a previous key, even when the signing secret needs nothing', async () => {
    const current = new SecretBox(currentKey);
    const headers = JSON.stringify({ Authorization: 'Bearer mcp-token' });
    const stored = {
      _id: 'mcp',
      version: 1,
      signingSecret: current.seal(secretOf('mcp'), contextOf('mcp')),
      headers: new SecretBox(previousKey).seal(headers, 'agents/mcp/headers'),
    };
    const sets: Array<Record<string, string>> = [];
    const collection = {
      find: () => ({ toArray: async () => [stored] }),
      updateOne: async (_filter: unknown, update: { $set: Record<string, string> }) => {
        sets.push(update.$set);
        return { matchedCount: 1 };
      },
      insertOne: async () => ({ acknowledged: true }),
      deleteOne: async () => ({ deletedCount: 1 }),
    };
    const agents = new AgentStore(
      { collection: () => collection } as unknown as Store,
      new SecretBox(currentKey, [previousKey]),
    );
    expect(await agents.sealStoredSecrets()).toEqual({ sealed: 1, leftBusy: 0 });
    expect(current.sealedWithCurrentKey(sets[0].headers)).toBe(true);
    expect(current.open(sets[0].headers, 'agents/mcp/headers')).toBe(headers);
    expect(current.open(sets[0].signingSecret, contextOf('mcp'))).toBe(secretOf('mcp'));
  });
});
