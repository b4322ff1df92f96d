import type { WebSocket } from 'ws';
import pino from 'pino';
import { ParticipantType } from '../auth/participant';
import { createMetrics } from '../ops/metrics';
import type { RoomHub } from './room-hub';
import { RoomSocket, type RoomSocketDeps } from './room-socket';

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
