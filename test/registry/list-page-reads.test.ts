import type { CommandStartedEvent } from 'mongodb';
import { ParticipantType } from '../../src/auth/participant';
import { PrincipalKind, type Principal } from '../../src/auth/principal';
import { AgentDirectory } from '../../src/registry/agent-directory';
import { AGENTS_COLLECTION } from '../../src/registry/agent-store';
import { agentView } from '../../src/registry/agent-view';
import { RoomDirectory } from '../../src/rooms/room-directory';
import { ROOMS_COLLECTION, RoomStore } from '../../src/rooms/room-store';
import { Store } from '../../src/store/mongo';
import { registerAgentWith } from '../support/agents';
import { stackAgents } from '../support/database';
import { call } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { testStack } from '../support/test-stack';

/**
 * What a page of a list costs the store: the directories of this process, on the test stack's
 * store, with every command the driver sends counted. A page reads by `_id` only the records not
 * read since they last changed, not every record on it.
 */
const PAGE = 30;

let store: Store;
const sent: CommandStartedEvent[] = [];

beforeAll(async () => {
  const { mongoUri, mongoDatabase } = testStack();
  store = await Store.connect(`${mongoUri}${mongoUri.includes('?') ? '&' : '?'}monitorCommands=true`, mongoDatabase);
  store.client.on('commandStarted', (event) => sent.push(event));
});

afterAll(() => store?.close());

/** The reads by `_id` of `ids` in `collection` sent while `read` ran. */
async function readsOf(collection: string, ids: string[], read: () => Promise<unknown>): Promise<string[]> {
  const from = sent.length;
  await read();
  return sent
    .slice(from)
    .filter((event) => event.commandName === 'find' && event.command.find === collection)
    .map((event) => event.command.filter?._id as string)
    .filter((id) => ids.includes(id));
}

describe('the cost of a list page', () => {
  it('reads each agent of a page once, then again only after it changed', async () => {
    const owner = newUserId();
    const headers = await humanHeaders(owner);
    const principal: Principal = { kind: PrincipalKind.HUMAN, id: owner };
    const agents = [];
    for (let index = 0; index < PAGE; index += 1)
      agents.push(await registerAgentWith({ headers }, { name: `Paged ${index}`, visibility: 'private' }));
    const withHeaders = await registerAgentWith(
      { headers },
      { name: 'Paged with headers', visibility: 'private', protocol: 'mcp', headers: { 'X-Team': 'team-secret' } },
    );
    const ids = agents.map((agent) => agent.agentId).sort();
    const directory = new AgentDirectory(stackAgents(store));
    // Read whole first, by a list of someone who sees none of these agents.
    await directory.listVisible({ kind: PrincipalKind.HUMAN, id: newUserId() }, { limit: 1 });

    expect(await readsOf(AGENTS_COLLECTION, ids, () => directory.findVisibleByIds(principal, ids))).toHaveLength(PAGE);
    for (let page = 0; page < 3; page += 1) {
      let found: Awaited<ReturnType<AgentDirectory['findVisibleByIds']>> = [];
      expect(
        await readsOf(AGENTS_COLLECTION, ids, async () => (found = await directory.findVisibleByIds(principal, ids))),
      ).toEqual([]);
      expect(found.map((agent) => agent.id)).toEqual(ids);
    }

    const patched = await call('PATCH', `/agents/${ids[3]}`, { headers, body: { name: 'Renamed' } });
    expect(patched.status).toBe(200);
    // A list catches up with the change log first: the changed agent is read again, and shows the change.
    let listed: Awaited<ReturnType<AgentDirectory['listVisible']>> = [];
    const reads = await readsOf(AGENTS_COLLECTION, ids, async () => {
      await directory.listVisible(principal, { limit: 1 });
      listed = await directory.findVisibleByIds(principal, ids);
    });
    // Once by the directory's refresh of its entry, once for the page.
    expect(reads).toEqual([ids[3], ids[3]]);
    expect(listed.find((agent) => agent.id === ids[3])?.name).toBe('Renamed');
    // The page shows no secret: none is kept; its owner sees the names of an agent's headers.
    expect(listed.every((agent) => !('signingSecret' in agent) && !('headers' in agent))).toBe(true);
    const [shown] = await directory.findVisibleByIds(principal, [withHeaders.agentId]);
    expect(agentView(shown, principal).headerNames).toEqual(['X-Team']);
    expect(JSON.stringify(shown)).not.toContain('team-secret');
  });

  it("reads each room of a page of a participant's rooms once", async () => {
    const human = newUserId();
    const roomIds: string[] = [];
    for (let index = 0; index < PAGE; index += 1) {
      const reply = await call('POST', '/rooms', {
        apiKey: 'admin',
        body: { name: `Paged ${index}`, participants: [{ type: 'HUMAN', participantId: human }] },
      });
      expect(reply.status).toBe(201);
      roomIds.push(reply.body.roomId);
    }
    roomIds.sort();
    const directory = new RoomDirectory(new RoomStore(store));
    const page = async () =>
      expect(
        (await directory.listForParticipant({ type: ParticipantType.HUMAN, id: human }, 200)).map((room) => room.id),
      ).toEqual(roomIds);

    expect(await readsOf(ROOMS_COLLECTION, roomIds, page)).toHaveLength(PAGE);
    expect(await readsOf(ROOMS_COLLECTION, roomIds, page)).toEqual([]);
  });
});
