import type { Agent } from './agent';
import type { AgentStore } from './agent-store';
import { RECENT_AGENT_MAX_AGE_MS, RecentAgents } from './recent-agents';

/** An AgentStore with one agent, counting reads, whose changes the test makes. */
function storeWith(agent: Agent | null) {
  const listeners: Array<(agentId: string) => void> = [];
  let stored = agent;
  let pending: Array<() => void> = [];
  const store = {
    reads: 0,
    /** Reads wait until `finishReads` while true. */
    holdReads: false,
    findById: async () => {
      store.reads += 1;
      const seen = stored;
      if (store.holdReads) await new Promise<void>((resolve) => pending.push(resolve));
      return seen;
    },
    onChange: (listener: (agentId: string) => void) => void listeners.push(listener),
    change(next: Agent | null) {
      stored = next;
      for (const listener of listeners) listener('agent-1');
    },
    finishReads() {
      for (const resolve of pending) resolve();
      pending = [];
    },
  };
  return store;
}

const agent = (endpointUrl: string) => ({ id: 'agent-1', visibility: 'public', endpointUrl }) as unknown as Agent;

describe('RecentAgents', () => {
  afterEach(() => jest.useRealTimers());

  it('answers from the last read for a second, then reads again', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const store = storeWith(agent('http://a'));
    const recent = new RecentAgents(store as unknown as AgentStore);
    expect(await recent.findById('agent-1')).toMatchObject({ endpointUrl: 'http://a' });
    expect(await recent.findVisible(undefined, 'agent-1')).toMatchObject({ endpointUrl: 'http://a' });
    expect(store.reads).toBe(1);
    jest.setSystemTime(1_000_000 + RECENT_AGENT_MAX_AGE_MS);
    await recent.findById('agent-1');
    expect(store.reads).toBe(2);
  });

  it('forgets an agent changed through the store at once', async () => {
    const store = storeWith(agent('http://a'));
    const recent = new RecentAgents(store as unknown as AgentStore);
    await recent.findById('agent-1');
    store.change(agent('http://b'));
    expect(await recent.findById('agent-1')).toMatchObject({ endpointUrl: 'http://b' });
    store.change(null);
    expect(await recent.findById('agent-1')).toBeNull();
  });

  it('does not keep a read that a change overtook, nor an unknown id', async () => {
    const store = storeWith(agent('http://a'));
    const recent = new RecentAgents(store as unknown as AgentStore);
    store.holdReads = true;
    const overtaken = recent.findById('agent-1');
    store.change(agent('http://b'));
    store.finishReads();
    expect(await overtaken).toMatchObject({ endpointUrl: 'http://a' });
    store.holdReads = false;
    expect(await recent.findById('agent-1')).toMatchObject({ endpointUrl: 'http://b' });

    const empty = storeWith(null);
    const none = new RecentAgents(empty as unknown as AgentStore);
    await none.findById('agent-1');
    await none.findById('agent-1');
    expect(empty.reads).toBe(2);
  });
});
