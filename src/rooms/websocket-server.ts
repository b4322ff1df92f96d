import http, { type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Authenticator } from '../auth/authenticate';
import { endWithError } from '../http/answer-headers';
import { ApiError, ErrorCode, forbidden, invalid, notFound, rateLimited } from '../http/errors';
import { CAP_RETRY_AFTER_MS, type ConcurrencyCap } from '../limits/concurrency-cap';
import type { Limits } from '../limits/limits';
import { principalKey } from '../limits/limit-keys';
import { toApiError, type ErrorMapper } from '../http/error-handler';
import type { Logger } from '../ops/logger';
import type { RoomMetrics } from '../ops/metrics';
import { CloseCode } from './frames';
import type { MessageStore } from './message-store';
import { messageInput } from './message-input';
import { participantOf } from '../auth/participant';
import { readAccess, RoomAccess } from './room';
import type { RoomHub } from './room-hub';
import { RoomSocket, type RoomTaskFrames } from './room-socket';
import { chosenProtocol, protocolCredentials } from './socket-protocols';
import type { RoomStore } from './room-store';
import type { SendMessage } from './schemas';

/** The room WebSocket path: `/parties/chat-server/{roomId}`. */
const ROOM_PATH = /^\/parties\/chat-server\/([^/]+)$/;
/** Largest frame a client may send (docs/api.md, "WebSocket"). */
const MAX_PAYLOAD_BYTES = 1024 * 1024;
/** How long shutdown waits for clients to acknowledge the close before cutting them off. */
const CLOSE_GRACE_MS = 1_000;

export interface RoomWebSocketDeps {
  authenticator: Authenticator;
  tasks?: RoomTaskFrames;
  rooms: RoomStore;
  messages: MessageStore;
  hub: RoomHub;
  logger: Logger;
  metrics: RoomMetrics;
  maxMessageChars: number;
  heartbeatMs: number;
  maxBufferedBytes: number;
  limits: Pick<
    Limits,
    'socketsPerPrincipal' | 'socketsPerAddress' | 'writesPerPrincipal' | 'readsPerPrincipal' | 'clientAddress'
  >;
  errorMappers: readonly ErrorMapper[];
}

/**
 * The rooms' WebSocket endpoint on the API's HTTP server. Every handshake is authenticated and
 * checked against the room before the upgrade; a refusal is a plain HTTP answer (401, 403, 404).
 */
export class RoomWebSocketServer {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_PAYLOAD_BYTES,
    clientTracking: false,
    handleProtocols: chosenProtocol,
  });
  private readonly sockets = new Set<RoomSocket>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly readMessage: (value: unknown) => SendMessage;

  constructor(private readonly deps: RoomWebSocketDeps) {
    this.readMessage = messageInput(deps.maxMessageChars);
    this.heartbeat = setInterval(() => this.checkPulses(), deps.heartbeatMs);
    this.heartbeat.unref();
  }

  attach(server: http.Server): void {
    server.on(
      'upgrade',
      (request: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(request, socket, head),
    );
  }

  /** Closes every connection: politely first, then cut after a short grace. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    for (const socket of this.sockets) socket.close(CloseCode.SERVER_SHUTTING_DOWN, 'Server shutting down');
    const deadline = Date.now() + CLOSE_GRACE_MS;
    while (this.sockets.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    for (const socket of this.sockets) socket.terminate();
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // A client that hangs up mid-handshake must not crash the process.
    socket.on('error', () => socket.destroy());
    const address = this.deps.limits.clientAddress(request);
    try {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const match = ROOM_PATH.exec(url.pathname);
      if (!match) throw notFound('WebSocket endpoint');
      const offered = protocolCredentials(request);
      const principal = await this.deps.authenticator.resolve(
        {
          apiKey:
            offered.apiKey ??
            url.searchParams.get('api-key') ??
            url.searchParams.get('apiKey') ??
            header(request, 'x-api-key'),
          sessionToken:
            offered.sessionToken ?? url.searchParams.get('Authorization') ?? header(request, 'authorization'),
          identityToken:
            offered.identityToken ?? url.searchParams.get('X-Identity-Token') ?? header(request, 'x-identity-token'),
        },
        address,
      );
      if (!principal)
        throw new ApiError(
          ErrorCode.UNAUTHENTICATED,
          'A credential is required: api-key, or Authorization with X-Identity-Token',
        );
      const participant = participantOf(principal);
      if (!participant) throw forbidden('Room connections are for humans and agents');
      // A handshake is one read of its credential, however long the socket then stays open.
      await this.deps.limits.readsPerPrincipal.consume(principalKey(principal));
      const since = parseSince(url.searchParams.get('since'));
      const roomId = decodedSegment(match[1]);
      const room = roomId === undefined ? undefined : await this.deps.rooms.findById(roomId);
      // The read rule of HTTP, answered alike: a private room the caller may not read is not admitted to exist.
      if (!room || readAccess(room, principal) !== RoomAccess.ALLOWED) throw notFound('Room');
      const alreadyConnected = this.deps.hub.isConnected(room.id, participant);
      if (!alreadyConnected && this.deps.hub.connectedParticipants(room.id) >= room.maxParticipants) {
        throw forbidden(`The room is full: ${room.maxParticipants} participants are connected`);
      }
      const holder = principalKey(principal);
      refuseOverCap(this.deps.limits.socketsPerPrincipal, holder, 'This credential');
      refuseOverCap(this.deps.limits.socketsPerAddress, address, 'This address');
      if (socket.destroyed) return;
      // From the checks above to join() nothing awaits: ws upgrades and calls back in the same tick,
      // so two handshakes cannot both take the last place in a room, or under a cap.
      this.wss.handleUpgrade(request, socket, head, (ws) => {
        const releases = [
          this.deps.limits.socketsPerPrincipal.hold(holder),
          this.deps.limits.socketsPerAddress.hold(address),
        ];
        this.deps.metrics.socketsOpen.inc();
        ws.once('close', () => {
          releases.forEach((release) => release());
          this.deps.metrics.socketsOpen.dec();
        });
        const roomSocket = new RoomSocket(ws, room.id, participant, {
          hub: this.deps.hub,
          tasks: this.deps.tasks,
          messages: this.deps.messages,
          readMessage: this.readMessage,
          maxBufferedBytes: this.deps.maxBufferedBytes,
          countWrite: () => this.deps.limits.writesPerPrincipal.consume(holder),
          logger: this.deps.logger,
          metrics: this.deps.metrics,
          errorMappers: this.deps.errorMappers,
        });
        this.sockets.add(roomSocket);
        ws.once('close', () => this.sockets.delete(roomSocket));
        ws.on('error', (error) => this.deps.logger.debug({ err: error, roomId: room.id }, 'websocket error'));
        void roomSocket.start(since);
      });
    } catch (thrown) {
      const error = toApiError(thrown, this.deps.errorMappers);
      if (error.status >= 500) this.deps.logger.error({ err: thrown, url: request.url }, 'websocket handshake failed');
      refuse(socket, error);
    }
  }

  /** Pings everyone; a connection silent (no pong, no frame) for two intervals is cut. */
  private checkPulses(): void {
    const silentSince = Date.now() - 2 * this.deps.heartbeatMs;
    for (const socket of this.sockets) {
      if (socket.lastSeen < silentSince) socket.terminate();
      else socket.ping();
    }
  }
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** A path segment decoded; undefined when it is not valid percent-encoding (no room has such an id). */
function decodedSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

function parseSince(raw: string | null): number | undefined {
  if (raw === null) return undefined;
  if (!/^[0-9]{1,15}$/.test(raw)) throw invalid('since must be a message seq (a non-negative integer)');
  return Number(raw);
}

/** 429 when `key` already holds the most sockets `cap` allows. */
function refuseOverCap(cap: ConcurrencyCap, key: string, holder: string): void {
  if (cap.isFull(key))
    throw rateLimited(
      `${holder} holds ${cap.max} open WebSockets, the most allowed; close one first`,
      CAP_RETRY_AFTER_MS,
    );
}

/** Answers the handshake with the contract's error body and hangs up, without upgrading. */
function refuse(socket: Duplex, error: ApiError): void {
  if (!socket.destroyed) endWithError(socket, error.status, error);
}
