import { randomBytes } from 'node:crypto';
import { allPages, registerAgentWith } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { useSecondApi } from '../support/second-api';

/** Lists and searches come from each process's in-memory directory (src/registry/agent-directory.ts): a change through one process shows in the other's next answer. */
const database = useTestDatabase();
const secondUrl = useSecondApi('agent-directory');

const word = () => `zd${randomBytes(5).toString('hex')}`;
const changeCount = async () =>
  (
    await database()
      .collection('change_counters')
      .findOne({ _id: 'agents' as never })
  )?.seq;

async function searchIds(
  baseUrl: string | undefined,
  headers: Record<string, string>,
  query: string,
): Promise<string[]> {
  const reply = await call('GET', `/agents/search?query=${query}`, { headers, baseUrl });
  expect(reply.status).toBe(200);
  return reply.body.map((agent: { agentId: string }) => agent.agentId);
}

/** Every page: the shared database holds more agents than one page, whichever tests ran before. */
const listIds = (baseUrl: string | undefined, headers: Record<string, string>): Promise<string[]> =>
  allPages('/agents', { headers, baseUrl }, 200);

describe('the agent directory across two API processes', () => {
  it('lists and finds an agent registered, changed, shared and deleted through the other process from the next request on', async () => {
    const [owner, friend] = [newUserId(), newUserId()];
    const [ownerHeaders, friendHeaders] = [await humanHeaders(owner), await humanHeaders(friend)];
    const [before, after] = [word(), word()];
    // Both processes read their directories before the changes.
    expect(await searchIds(secondUrl(), ownerHeaders, before)).toEqual([]);
    expect(await searchIds(undefined, ownerHeaders, before)).toEqual([]);

    const changesBefore = await changeCount();
    const agent = await registerAgentWith(
      { headers: ownerHeaders },
      { name: `Agent ${before}`, visibility: 'private' },
    );
    expect(await changeCount()).toBeGreaterThan(changesBefore ?? 0);
    expect(await searchIds(secondUrl(), ownerHeaders, before)).toEqual([agent.agentId]);
    expect(await searchIds(secondUrl(), friendHeaders, before)).toEqual([]);
    expect(await listIds(secondUrl(), friendHeaders)).not.toContain(agent.agentId);

    const patched = await call('PATCH', `/agents/${agent.agentId}`, {
      headers: ownerHeaders,
      body: { name: `Agent ${after}`, sharedWith: [friend] },
    });
    expect(patched.status).toBe(200);
    expect(await searchIds(secondUrl(), ownerHeaders, before)).toEqual([]);
    expect(await searchIds(secondUrl(), friendHeaders, after)).toEqual([agent.agentId]);
    expect(await listIds(secondUrl(), friendHeaders)).toContain(agent.agentId);

    expect(
      (await call('DELETE', `/agents/${agent.agentId}`, { headers: ownerHeaders, baseUrl: secondUrl() })).status,
    ).toBe(204);
    expect(await searchIds(undefined, ownerHeaders, after)).toEqual([]);
    expect(await listIds(undefined, ownerHeaders)).not.toContain(agent.agentId);
  });

  it('answers a capability search and a list from the directory with the agents as stored', async () => {
    const headers = await humanHeaders(newUserId());
    const operation = word();
    const agent = await registerAgentWith(
      { headers },
      { capabilities: { tools: [{ name: operation, description: 'x', inputSchema: { type: 'object' } }] } },
    );
    const found = await call('GET', `/agents/search?capability=tools/${operation}`, { headers, baseUrl: secondUrl() });
    expect(found.body.map((record: { agentId: string; version: number }) => [record.agentId, record.version])).toEqual([
      [agent.agentId, 1],
    ]);
    await call('PATCH', `/agents/${agent.agentId}`, { headers, body: { description: 'changed' } });
    const again = await call('GET', `/agents/search?capability=tools/${operation}`, { headers, baseUrl: secondUrl() });
    expect(
      again.body.map((record: { description: string; version: number }) => [record.description, record.version]),
    ).toEqual([['changed', 2]]);
  });
});
