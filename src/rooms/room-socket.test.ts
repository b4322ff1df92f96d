import type { WebSocket } from 'ws';
import pino from 'pino';
import { ParticipantType } from '../auth/participant';
import { createMetrics } from '../ops/metrics';
import type { Message, MessageStore } from './message-store';
import { RoomHub } from './room-hub';
import { RoomSocket, type RoomSocketDeps } from './room-socket';
import { until } from '../../test/support/until';

/** A socket whose peer stopped reading: `queued` bytes wait in its buffer. */
function stalledSocket(queued: number) {
  const socket = { readyState: 1, OPEN: 1, bufferedAmount: queued, sent: 0, terminated: false };
  return Object.assign(socket, {
    send: () => {
      socket.sent += 1;
    },
    terminate: () => {
      socket.terminated = true;
    },
  });
}

describe('RoomSocket', () => {
  it('cuts a reader whose queue passes the bound, and counts it', async () => {
    const metrics = createMetrics();
    const deps = {
      hub: {} as RoomHub,
      messages: {},
      maxBufferedBytes: 1_000,
      logger: pino({ level: 'silent' }),
      metrics: metrics.rooms,
    } as unknown as RoomSocketDeps;
    const participant = { type: ParticipantType.HUMAN, id: 'reader' };
    const keepingUp = stalledSocket(10);
    const stalled = stalledSocket(5_000);
    new RoomSocket(keepingUp as unknown as WebSocket, 'room', participant, deps).deliver(Buffer.from('{}'));
    new RoomSocket(stalled as unknown as WebSocket, 'room', participant, deps).deliver(Buffer.from('{}'));
    expect([keepingUp.terminated, stalled.terminated]).toEqual([false, true]);
    expect((await metrics.rooms.slowReadersCut.get()).values[0].value).toBe(1);
  });
});

/** A socket that takes every frame: the seqs of the MESSAGE frames it was sent, in order. */
function recordingSocket() {
  const seqs: number[] = [];
  const socket = {
    readyState: 1,
    OPEN: 1,
    bufferedAmount: 0,
    on: () => socket,
    once: () => socket,
    send(data: string | Buffer, second?: unknown, third?: unknown) {
      const frame = JSON.parse(data.toString()) as { type: string; data: { seq?: number } };
      if (frame.type === 'MESSAGE' && frame.data.seq !== undefined) seqs.push(frame.data.seq);
      const callback = [second, third].find((argument) => typeof argument === 'function') as (() => void) | undefined;
      if (callback) setImmediate(callback);
    },
  };
  return { socket, seqs };
}

/**
 * A message store whose reads see only `visible` seqs: the parallel lookups of a history page can
 * find a later message of a batch and miss an earlier one still being written.
 */
function storeSeeing(visible: Set<number>, roomId: string) {
  const message = (seq: number): Message => ({
    id: `m${seq}`,
    roomId,
    seq,
    content: `c${seq}`,
    sender: { type: ParticipantType.HUMAN, id: 'writer' },
    timestamp: new Date(0),
  });
  let counter = Math.max(0, ...visible);
  const inserting: Array<() => void> = [];
  const store = {
    message,
    /** Batches given to insertMany so far. */
    batches: 0,
    reserveSeqs: async (_roomId: string, count: number) => {
      counter += count;
      return counter - count + 1;
    },
    /** Makes the batch's last message readable at once, and the rest once `finishInserts` is called. */
    insertMany(batch: Array<{ seq: number }>) {
      store.batches += 1;
      visible.add(batch[batch.length - 1].seq);
      return new Promise<{ stored: Message[] }>((resolve) => {
        inserting.push(() => {
          for (const { seq } of batch) visible.add(seq);
          resolve({ stored: batch.map(({ seq }) => message(seq)) });
        });
      });
    },
    page: async (_roomId: string, cursor: { seq: number }, limit: number) =>
      [...visible]
        .filter((seq) => seq > cursor.seq)
        .sort((a, b) => a - b)
        .slice(0, limit)
        .map(message),
    finishInserts: () => inserting.splice(0).forEach((finish) => finish()),
  };
  return store;
}

describe('RoomSocket resuming with since', () => {
  const participant = { type: ParticipantType.HUMAN, id: 'reader' };
  const resume = (store: ReturnType<typeof storeSeeing>) => {
    const metrics = createMetrics();
    const logger = pino({ level: 'silent' });
    const hub = new RoomHub(store as unknown as MessageStore, logger, metrics.rooms);
    const reader = recordingSocket();
    const deps = { hub, messages: store, maxBufferedBytes: 1_000_000, logger, metrics: metrics.rooms };
    const socket = new RoomSocket(
      reader.socket as unknown as WebSocket,
      'room',
      participant,
      deps as unknown as RoomSocketDeps,
    );
    return { hub, socket, seqs: reader.seqs };
  };
  const writer = { type: ParticipantType.HUMAN, id: 'writer' };

  it('waits for a message this process is still writing rather than skip it, and keeps seq order', async () => {
    const store = storeSeeing(new Set([1, 2, 3, 4, 5]), 'room');
    const { hub, socket, seqs } = resume(store);
    const send = (content: string) => hub.sendMessage({ roomId: 'room', sender: writer, content });
    // 6 goes alone; 7 and 8, sent while it is stored, go in the next batch.
    const sent = Promise.all([send('c6'), send('c7'), send('c8')]);
    await until(() => store.batches === 1, 'the first batch');
    store.finishInserts();
    await until(() => store.batches === 2, 'the second batch');
    // The history read finds 8 while 7, of the same batch, is still being written.
    const started = socket.start(2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    store.finishInserts();
    await Promise.all([sent, started]);
    expect(seqs).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it('reads the history again when it missed a message this process stored while the read ran', async () => {
    const store = storeSeeing(new Set([1, 2, 3, 4, 5]), 'room');
    const { hub, socket, seqs } = resume(store);
    // The writer's own connection keeps the room live here, with what it published.
    hub.join({ roomId: 'room', participant: writer, deliver: () => undefined, close: () => undefined });
    const send = (content: string) => hub.sendMessage({ roomId: 'room', sender: writer, content });
    const sent = Promise.all([send('c6'), send('c7'), send('c8')]);
    await until(() => store.batches === 1, 'the first batch');
    store.finishInserts();
    await until(() => store.batches === 2, 'the second batch');
    store.finishInserts();
    await sent;
    // The read looked 7 up before its insert ended and 8 after: its page lacks 7, now stored.
    const page = store.page;
    let reads = 0;
    store.page = async (roomId, cursor, limit) =>
      (await page(roomId, cursor, limit)).filter((message) => reads++ > 5 || message.seq !== 7);
    await socket.start(2);
    expect(seqs).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it('delivers a live message whose seq the history read did not find, once', async () => {
    const store = storeSeeing(new Set([1, 2, 3, 4, 5, 6, 8]), 'room');
    const { hub, socket, seqs } = resume(store);
    // Seq 7 is another process's, still being written there: this process does not know of it.
    await socket.start(2);
    hub.publishStored(store.message(7), true);
    hub.publishStored(store.message(8), true);
    expect(seqs).toEqual([3, 4, 5, 6, 8, 7]);
  });
});
