import { call } from '../support/http';
import { newUserId } from '../support/humans';
import { createRoom, isMessage, RoomClient } from '../support/room-client';
import { startSecondApi } from '../support/second-api';
import type { ServiceProcess } from '../support/service-process';

/** A second API process on the same MongoDB: both allocate seqs for one room. */
let second: ServiceProcess;
let secondWsUrl: string;
const clients: RoomClient[] = [];

beforeAll(async () => {
  ({ process: second, wsUrl: secondWsUrl } = await startSecondApi('rooms-second'));
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await second?.stop();
});

describe('two API processes writing to one room', () => {
  it("give every message its own seq, and keep each sender's order", async () => {
    const room = await createRoom();
    const [alice, bob] = [newUserId(), newUserId()];
    const here = await RoomClient.connect(room.roomId, { human: alice });
    const there = await RoomClient.connect(room.roomId, { human: bob }, { wsUrl: secondWsUrl });
    clients.push(here, there);
    const count = 30;
    for (let index = 0; index < count; index++) {
      here.sendMessage(`a${index}`);
      there.sendMessage(`b${index}`);
    }
    // Each process echoes its own sender's messages once they are stored.
    await here.waitForCount((frame) => isMessage()(frame) && frame.data.sender.id === alice, count);
    await there.waitForCount((frame) => isMessage()(frame) && frame.data.sender.id === bob, count);

    const history = await call('GET', `/rooms/${room.roomId}/messages?limit=200`);
    const seqs = history.body.map((message: any) => message.data.seq);
    expect(new Set(seqs).size).toBe(2 * count);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const contentsOf = (sender: string) =>
      history.body
        .filter((message: any) => message.data.sender.id === sender)
        .map((message: any) => message.data.content);
    expect(contentsOf(alice)).toEqual(Array.from({ length: count }, (_, index) => `a${index}`));
    expect(contentsOf(bob)).toEqual(Array.from({ length: count }, (_, index) => `b${index}`));
  });
});
