// bench/store-reads: the reads that serve requests, on the embedded FerretDB at 1k, 10k and 100k
// documents, in the plain query shape (one find with a filter, sort and limit) and as the service
// reads (by `_id`, and from the in-memory directories), each as a ratio to the cost of one
// `findOne({_id})` on the same collection measured in the same run.
//
//   npx tsx bench/store-reads/run.ts [largest size, default 100000]   (a few minutes at 100k)
//
// Per size: as many agents, rooms and messages (all in one room). A read is repeated for up to 2 s
// (at least 3 times, at most 50); the median counts. A change costs each process one write of the
// change log and a refresh of that document; the first list of a process reads the directory whole
// (timed once), and a page whose records the process has not read since they changed reads them by
// `_id` (timed once).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { mongoUriFor } from '../../src/embedded/ferretdb';
import { freePort } from '../../src/util/ports';
import { ensureBinaries } from '../../src/embedded/provision';
import { PrincipalKind, type Principal } from '../../src/auth/principal';
import { SecretBox } from '../../src/auth/secret-box';
import type { Agent } from '../../src/registry/agent';
import { AgentDirectory } from '../../src/registry/agent-directory';
import { AGENTS_COLLECTION, AgentStore } from '../../src/registry/agent-store';
import { queryTokens, rank } from '../../src/registry/search';
import { messageId } from '../../src/rooms/message-ids';
import { MESSAGES_COLLECTION, MessageStore, SEQUENCES_COLLECTION } from '../../src/rooms/message-store';
import { RoomDirectory } from '../../src/rooms/room-directory';
import { ROOMS_COLLECTION, RoomStore } from '../../src/rooms/room-store';
import { Store } from '../../src/store/mongo';
import { startServiceFerretDb } from '../../test/support/ferretdb';

const LARGEST = Number(process.argv[2] ?? 100_000);
const SIZES = [1_000, 10_000, 100_000].filter((size) => size <= LARGEST);
const DATABASE = 'store_reads_bench';
const ROOM = 'bench-room';
const BATCH = 1_000;
const PAGE = 50;
/** The largest page of `GET /agents` and `GET /rooms`. */
const LIST_PAGE = 200;
/** One agent in this many has the searched word in its name. */
const MATCH_EVERY = 100;
const caller: Principal = { kind: PrincipalKind.HUMAN, id: 'bench-reader' };

async function median(read: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  const until = Date.now() + 2_000;
  while (times.length < 3 || (times.length < 50 && Date.now() < until)) {
    const start = process.hrtime.bigint();
    await read();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

function agentAt(index: number): Agent {
  const now = new Date();
  const name = index % MATCH_EVERY === 0 ? `Translator ${index}` : `Agent ${index}`;
  return {
    id: `agent-${String(index).padStart(7, '0')}`,
    name,
    description: 'A bench agent that answers',
    protocol: 'acs',
    defaultPrompt: 'Hello',
    endpointUrl: 'https://agents.example/mcp',
    chatUrl: 'https://agents.example/chat',
    capabilities: {
      tools: [{ name: `tool${index % 20}`, description: 'does a thing', inputSchema: { type: 'object' } }],
    },
    // Half public; the private half is owned by others, so the caller sees only the public half.
    visibility: index % 2 === 0 ? 'public' : 'private',
    sharedWith: [],
    owner: { kind: PrincipalKind.SERVICE, id: `owner-${index % 50}` },
    signingSecret: 'whsec_bench',
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

async function fill(store: Store, agents: AgentStore, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += BATCH) {
    const indexes = Array.from({ length: Math.min(BATCH, to - start) }, (_, offset) => start + offset);
    const now = new Date();
    await store
      .collection(AGENTS_COLLECTION)
      .insertMany(indexes.map((index) => agents.toDocument(agentAt(index)) as never));
    await store.collection(ROOMS_COLLECTION).insertMany(
      indexes.map((index) => ({
        _id: `room-${String(index).padStart(7, '0')}`,
        name: `Room ${index}`,
        type: 'CHAT',
        description: '',
        maxParticipants: 100,
        private: index % 2 === 1,
        metadata: 'null',
        participants: [{ type: 'HUMAN', participantId: `user-${index % 500}` }],
        memberKeys: [`HUMAN:user-${index % 500}`],
        createdAt: now,
        updatedAt: now,
        revision: 0,
      })) as never[],
    );
    await store.collection(MESSAGES_COLLECTION).insertMany(
      indexes.map((index) => ({
        _id: messageId(ROOM, index + 1),
        roomId: ROOM,
        seq: index + 1,
        content: `message ${index + 1}`,
        sender: { type: 'HUMAN', id: 'user-1' },
        timestamp: now,
      })) as never[],
    );
  }
  await store
    .collection<{ _id: string; seq: number }>(SEQUENCES_COLLECTION)
    .updateOne({ _id: ROOM }, { $set: { seq: to } }, { upsert: true });
}

/** The filter of `canSee` as the registry queried it before the directory. */
const visibleTo = (principal: Principal) => ({
  $or: [{ visibility: 'public' }, { ownerId: principal.id }, { sharedWith: principal.id }],
});

async function main(): Promise<void> {
  const { ferretdb } = ensureBinaries(loadConfig().cacheDir);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acs-store-reads-'));
  const port = await freePort();
  const server = await startServiceFerretDb({ binary: ferretdb, dataDir, port, database: DATABASE });
  const store = await Store.connect(mongoUriFor(port), DATABASE);
  const [agents, rooms, messages] = [
    new AgentStore(store, new SecretBox(randomBytes(32))),
    new RoomStore(store),
    new MessageStore(store),
  ];
  const [directory, roomDirectory] = [new AgentDirectory(agents), new RoomDirectory(rooms)];
  const tokens = queryTokens('translator');
  const rows: string[] = [];
  try {
    let filled = 0;
    for (const size of SIZES) {
      const started = Date.now();
      await fill(store, agents, filled, size);
      filled = size;
      console.log(`${size} of each stored in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      const figures: Array<[string, number, number]> = [];
      const measure = async (what: string, before: () => Promise<unknown>, after: () => Promise<unknown>) => {
        const [old, now] = [await median(before), await median(after)];
        figures.push([what, old, now]);
      };
      const baseline = {
        agents: await median(() =>
          store.collection(AGENTS_COLLECTION).findOne({ _id: `agent-${String(size - 1).padStart(7, '0')}` as never }),
        ),
        rooms: await median(() =>
          store.collection(ROOMS_COLLECTION).findOne({ _id: `room-${String(size - 1).padStart(7, '0')}` as never }),
        ),
        messages: await median(() =>
          store.collection(MESSAGES_COLLECTION).findOne({ _id: messageId(ROOM, size) as never }),
        ),
      };
      const once = async (read: () => Promise<unknown>) => {
        const start = process.hrtime.bigint();
        await read();
        return Number(process.hrtime.bigint() - start) / 1e6;
      };
      const [freshAgents, freshRooms] = [new AgentDirectory(agents), new RoomDirectory(rooms)];
      const wholeAgents = await once(() => freshAgents.listVisible(caller, { limit: 1 }));
      const wholeRooms = await once(() => freshRooms.listPublic(1));
      // The page's records not read since they changed (here: never read by this process).
      const unreadAgents = await once(() =>
        freshAgents.listVisible(caller, { limit: LIST_PAGE, after: 'agent-0000001' }),
      );
      const unreadRooms = await once(() => freshRooms.listPublic(LIST_PAGE, 'room-0000001'));
      await directory.listVisible(caller, { limit: 1 });
      await roomDirectory.listPublic(1);
      const changedAgents = await median(async () => {
        await agents.changes.record(agentAt(size - 1).id);
        await directory.listVisible(caller, { limit: 1 });
      });
      const changedRooms = await median(async () => {
        await rooms.changes.record(`room-${String(size - 1).padStart(7, '0')}`);
        await roomDirectory.listPublic(1);
      });
      await measure(
        'GET /agents?limit=1',
        () =>
          store
            .collection(AGENTS_COLLECTION)
            .find({ $and: [visibleTo(caller), {}] })
            .sort({ _id: 1 })
            .limit(1)
            .toArray(),
        () => directory.listVisible(caller, { limit: 1 }),
      );
      await measure(
        'GET /agents/search?query=translator',
        async () => {
          const candidates = await store
            .collection(AGENTS_COLLECTION)
            .find(
              { $and: [visibleTo(caller), { searchTokens: { $in: tokens } }] },
              { projection: { _id: 1, name: 1, searchFields: 1 } },
            )
            .limit(1_000)
            .toArray();
          const ranked = rank(
            candidates.map(({ _id, name, searchFields }) => ({ id: _id as unknown as string, name, searchFields })),
            tokens,
          );
          return store
            .collection(AGENTS_COLLECTION)
            .find({
              $and: [
                visibleTo(caller),
                { _id: { $in: ranked.slice(0, PAGE).map((candidate) => candidate.id) as never[] } },
              ],
            })
            .toArray();
        },
        async () => {
          const ranked = rank(await directory.searchCandidates(caller, tokens, undefined, 1_000), tokens);
          return directory.findVisibleByIds(
            caller,
            ranked.slice(0, PAGE).map((candidate) => candidate.id),
          );
        },
      );
      await measure(
        `GET /agents?limit=${LIST_PAGE}`,
        () =>
          store
            .collection(AGENTS_COLLECTION)
            .find({ $and: [visibleTo(caller), {}] })
            .sort({ _id: 1 })
            .limit(LIST_PAGE)
            .toArray(),
        () => directory.listVisible(caller, { limit: LIST_PAGE }),
      );
      await measure(
        `GET /rooms?limit=${LIST_PAGE}`,
        () => store.collection(ROOMS_COLLECTION).find({ private: false }).sort({ _id: 1 }).limit(LIST_PAGE).toArray(),
        () => roomDirectory.listPublic(LIST_PAGE),
      );
      await measure(
        'GET /rooms?limit=1',
        () => store.collection(ROOMS_COLLECTION).find({ private: false }).sort({ _id: 1 }).limit(1).toArray(),
        () => roomDirectory.listPublic(1),
      );
      await measure(
        `history: last ${PAGE} messages`,
        () => store.collection(MESSAGES_COLLECTION).find({ roomId: ROOM }).sort({ seq: -1 }).limit(PAGE).toArray(),
        () => messages.page(ROOM, { kind: 'latest' }, PAGE),
      );
      await measure(
        `history: ${PAGE} after seq ${Math.floor(size / 2)}`,
        () =>
          store
            .collection(MESSAGES_COLLECTION)
            .find({ roomId: ROOM, seq: { $gt: Math.floor(size / 2) } })
            .sort({ seq: 1 })
            .limit(PAGE)
            .toArray(),
        () => messages.page(ROOM, { kind: 'after', seq: Math.floor(size / 2) }, PAGE),
      );
      const base = (what: string) =>
        what.includes('agents') ? baseline.agents : what.includes('rooms') ? baseline.rooms : baseline.messages;
      for (const [what, old, now] of figures) {
        rows.push(
          `| ${size} | ${what} | ${base(what).toFixed(2)} | ${old.toFixed(1)} | ${(old / base(what)).toFixed(0)} × | ${now.toFixed(1)} | ${(now / base(what)).toFixed(1)} × |`,
        );
      }
      const row = (what: string, base: number, ms: number) =>
        `| ${size} | ${what} | ${base.toFixed(2)} | | | ${ms.toFixed(1)} | ${(ms / base).toFixed(1)} × |`;
      rows.push(row('GET /agents?limit=1 after an agent changed (write + list)', baseline.agents, changedAgents));
      rows.push(row('GET /rooms?limit=1 after a room changed (write + list)', baseline.rooms, changedRooms));
      rows.push(
        row(`GET /agents?limit=${LIST_PAGE}, its agents not read before (once)`, baseline.agents, unreadAgents),
      );
      rows.push(row(`GET /rooms?limit=${LIST_PAGE}, its rooms not read before (once)`, baseline.rooms, unreadRooms));
      rows.push(row('first GET /agents of a process (directory read whole, once)', baseline.agents, wholeAgents));
      rows.push(row('first GET /rooms of a process (listing read whole, once)', baseline.rooms, wholeRooms));
      console.log(rows.slice(-13).join('\n'));
    }
  } finally {
    await store.close();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(
    '\n| documents | read | findOne by _id (ms) | before (ms) | before / _id | after (ms) | after / _id |\n|---|---|---|---|---|---|---|',
  );
  console.log(rows.join('\n'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
