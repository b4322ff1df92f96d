import fs from 'node:fs';
import path from 'node:path';
import { mongoUriFor } from '../../src/embedded/ferretdb';
import { startServiceFerretDb } from '../support/ferretdb';
import { type ManagedProcess } from '../../src/embedded/managed-process';
import { freePort } from '../../src/util/ports';
import { serviceEnv } from '../support/global-setup';
import { call } from '../support/http';
import { newUserId } from '../support/humans';
import { isError, isMessage, isSystem, RoomClient } from '../support/room-client';
import { ServiceProcess } from '../support/service-process';
import { testStack } from '../support/test-stack';

/**
 * Limits that need a service of their own: a 200 ms heartbeat, the smallest slow-reader bound,
 * and a FerretDB this file may stop.
 */
const HEARTBEAT_MS = 200;
const MAX_BUFFERED_BYTES = 64 * 1024;

let ferret: ManagedProcess;
let service: ServiceProcess;
let baseUrl: string;
let wsUrl: string;
const clients: RoomClient[] = [];

beforeAll(async () => {
  const stack = testStack();
  const dataDir = fs.mkdtempSync(path.join(stack.runDir, 'rooms-limits-'));
  const [mongoPort, apiPort] = [await freePort(), await freePort()];
  ferret = await startServiceFerretDb({
    binary: stack.binaries.ferretdb,
    dataDir,
    port: mongoPort,
    database: stack.mongoDatabase,
  });
  baseUrl = `http://127.0.0.1:${apiPort}`;
  wsUrl = `ws://127.0.0.1:${apiPort}`;
  const env = serviceEnv(stack, {
    PORT: String(apiPort),
    MONGODB_URI: mongoUriFor(mongoPort),
    DATA_DIR: dataDir,
    WS_HEARTBEAT_MS: String(HEARTBEAT_MS),
    WS_MAX_BUFFERED_BYTES: String(MAX_BUFFERED_BYTES),
  });
  service = ServiceProcess.spawn('server.ts', env, path.join(dataDir, 'service.log'));
  await service.waitReady(baseUrl);
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await service?.stop();
  await ferret?.stop();
});

async function room(body: Record<string, unknown> = {}): Promise<string> {
  const reply = await call('POST', '/rooms', { apiKey: 'admin', baseUrl, body: { name: 'limits', ...body } });
  expect(reply.status).toBe(201);
  return reply.body.roomId;
}

async function connect(roomId: string, user: string, autoPong = true): Promise<RoomClient> {
  const client = await RoomClient.connect(roomId, { human: user }, { wsUrl, autoPong });
  clients.push(client);
  return client;
}

describe('room WebSocket limits', () => {
  it('closes a connection that stopped answering pings, and keeps those that answer', async () => {
    const roomId = await room();
    const [lively, silent] = [newUserId(), newUserId()];
    const watcher = await connect(roomId, lively);
    const mute = await connect(roomId, silent, false);
    await watcher.waitFor(isSystem('participant_joined', silent));
    await watcher.waitFor(isSystem('participant_left', silent));
    await mute.closed;
    // The watcher answered every ping meanwhile and still works.
    watcher.sendMessage('still alive');
    await watcher.waitFor(isMessage('still alive'));
  });

  it('disconnects a reader that stops reading once its queue passes the bound', async () => {
    const roomId = await room();
    const [writerId, slowId] = [newUserId(), newUserId()];
    const writer = await connect(roomId, writerId);
    const slow = await connect(roomId, slowId);
    await writer.waitFor(isSystem('participant_joined', slowId));
    // The slow client stops reading: the kernel buffers fill, then the server's queue for it grows.
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const content = 'x'.repeat(16_000);
    let sent = 0;
    // Bounded: loopback kernel buffers hold a few MiB at most; this sends up to 32 MiB.
    while (!writer.frames.some(isSystem('participant_left', slowId)) && sent < 2_000) {
      for (let burst = 0; burst < 20; burst++, sent++) writer.sendMessage(content);
      await writer.waitForCount(isMessage(), sent);
    }
    expect(writer.frames.some(isSystem('participant_left', slowId))).toBe(true);
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await slow.closed;
  });

  it('answers ERROR and broadcasts nothing when the message cannot be stored', async () => {
    const roomId = await room();
    const [senderId, readerId] = [newUserId(), newUserId()];
    const sender = await connect(roomId, senderId);
    const reader = await connect(roomId, readerId);
    await sender.waitFor(isSystem('participant_joined', readerId));
    await ferret.stop();
    sender.sendMessage('lost');
    const error = await sender.waitFor(isError);
    expect(error.data).toEqual({ code: 'UNAVAILABLE', message: expect.any(String) });
    expect(sender.frames.filter(isMessage())).toEqual([]);
    expect(reader.frames.filter(isMessage())).toEqual([]);
  });
});
