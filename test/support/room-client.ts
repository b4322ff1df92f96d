import WebSocket from 'ws';
import { call } from './http';
import { humanTokens } from './humans';
import { testStack } from './test-stack';
import { STUCK_AFTER_MS } from './until';

/** A room WebSocket credential as the query carries it. */
export type SocketCredential =
  { apiKey: string; parameter?: 'api-key' | 'apiKey' } | { human: string; bearer?: boolean } | { none: true };

export interface ConnectOptions {
  since?: number;
  /** ws answers pings by itself unless told not to: false plays a peer that went silent. */
  autoPong?: boolean;
  wsUrl?: string;
  /** The loopback address to connect from (127.0.0.1 unless given), for limits counted per address. */
  localAddress?: string;
  /**
   * The participant (agentId, or a human's id) this first connection of theirs is: connect returns
   * once the room announced it joined, from when room tasks and task updates reach the socket.
   */
  joinedAs?: string;
}

/** Creates a room as admin (or `apiKey`) and returns the 201 body; throws on any other status. */
export async function createRoom(body: Record<string, unknown> = {}, apiKey = 'admin'): Promise<any> {
  const reply = await call('POST', '/rooms', { apiKey, body: { name: 'Test room', ...body } });
  if (reply.status !== 201) throw new Error(`creating a room answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

export async function roomSocketUrl(
  roomId: string,
  credential: SocketCredential,
  options: ConnectOptions = {},
): Promise<string> {
  const url = new URL(`${options.wsUrl ?? testStack().wsUrl}/parties/chat-server/${encodeURIComponent(roomId)}`);
  if ('apiKey' in credential) url.searchParams.set(credential.parameter ?? 'api-key', credential.apiKey);
  if ('human' in credential) {
    const { session, identity } = await humanTokens(credential.human);
    url.searchParams.set('Authorization', credential.bearer === false ? session : `Bearer ${session}`);
    url.searchParams.set('X-Identity-Token', identity);
  }
  if (options.since !== undefined) url.searchParams.set('since', String(options.since));
  return url.toString();
}

/** A connected test client: every frame it receives is kept, and waits are bounded. */
export class RoomClient {
  readonly frames: any[] = [];
  private readonly listeners = new Set<() => void>();
  readonly closed: Promise<{ code: number }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse((data as Buffer).toString()));
      for (const listener of this.listeners) listener();
    });
    this.closed = new Promise((resolve) => ws.once('close', (code) => resolve({ code })));
  }

  static async connect(
    roomId: string,
    credential: SocketCredential,
    options: ConnectOptions = {},
  ): Promise<RoomClient> {
    const ws = new WebSocket(await roomSocketUrl(roomId, credential, options), {
      autoPong: options.autoPong ?? true,
      localAddress: options.localAddress,
    });
    const client = new RoomClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_request, response) =>
        reject(new Error(`handshake refused with ${response.statusCode}`)),
      );
      ws.once('error', reject);
    });
    if (options.joinedAs !== undefined) await client.waitFor(isSystem('participant_joined', options.joinedAs));
    return client;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  sendMessage(content: string, metadata?: Record<string, unknown>): void {
    this.send({ type: 'MESSAGE', data: metadata === undefined ? { content } : { content, metadata } });
  }

  /** The first frame received that matches, waiting up to `timeoutMs` for it. */
  async waitFor(predicate: (frame: any) => boolean, timeoutMs = STUCK_AFTER_MS): Promise<any> {
    return (await this.waitForCount(predicate, 1, timeoutMs))[0];
  }

  /** The first `count` frames that match, in the order received. */
  waitForCount(predicate: (frame: any) => boolean, count: number, timeoutMs = STUCK_AFTER_MS): Promise<any[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const matching = this.frames.filter(predicate);
        if (matching.length < count) return false;
        finish();
        resolve(matching.slice(0, count));
        return true;
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `waited ${timeoutMs} ms for ${count} matching frames; got ${this.frames.filter(predicate).length} of ${this.frames.length} received, the last: ${JSON.stringify(this.frames.slice(-5))}`,
          ),
        );
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      const listener = () => void check();
      if (check()) return;
      this.listeners.add(listener);
    });
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.ws.close();
    await this.closed;
  }
}

export interface RefusedHandshake {
  status: number;
  body: any;
  /** The Retry-After header, when the refusal carried one. */
  retryAfter?: string;
}

/** The HTTP status a refused handshake answered with, and its body. */
export async function refusedHandshake(
  roomId: string,
  credential: SocketCredential,
  options: ConnectOptions = {},
): Promise<RefusedHandshake> {
  return refusedHandshakeAt(await roomSocketUrl(roomId, credential, options), options);
}

export function refusedHandshakeAt(
  url: string,
  options: Pick<ConnectOptions, 'localAddress'> = {},
): Promise<RefusedHandshake> {
  const ws = new WebSocket(url, { localAddress: options.localAddress });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.terminate();
      reject(new Error('handshake was accepted'));
    });
    ws.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      const retryAfter = response.headers['retry-after'];
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: JSON.parse(body),
          ...(retryAfter === undefined ? {} : { retryAfter }),
        }),
      );
    });
    ws.once('error', reject);
  });
}

export const isMessage = (content?: string) => (frame: any) =>
  frame.type === 'MESSAGE' && (content === undefined || frame.data.content === content);
export const isSystem = (event: string, participantId?: string) => (frame: any) =>
  frame.type === 'SYSTEM' &&
  frame.data.event === event &&
  (participantId === undefined || frame.data.participant.id === participantId);
export const isError = (frame: any) => frame.type === 'ERROR';

/**
 * Connects room clients for the file's tests, and closes them all after them. Use the returned
 * function inside tests as RoomClient.connect. A human's connection returns once the room announced
 * them joined (it is their first: each test's humans are new); an agent's too, given `joinedAs`.
 */
export function useRoomClients(): typeof RoomClient.connect {
  const clients: RoomClient[] = [];
  afterAll(() => Promise.all(clients.map((client) => client.close())));
  return async (roomId, credential, options) => {
    const joinedAs = options?.joinedAs ?? ('human' in credential ? credential.human : undefined);
    const client = await RoomClient.connect(roomId, credential, { ...options, joinedAs });
    clients.push(client);
    return client;
  };
}
