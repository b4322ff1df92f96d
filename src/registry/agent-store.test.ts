import type { Store } from '../store/mongo';
import type { Agent } from './agent';
import { AgentStore } from './agent-store';

/** An AgentStore over a stand-in collection whose writes match `matched` documents. */
function storeMatching(matched: number) {
  const collection = {
    replaceOne: async () => ({ matchedCount: matched }),
    updateOne: async () => ({ matchedCount: matched }),
    deleteOne: async () => ({ deletedCount: matched }),
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
