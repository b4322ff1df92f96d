import type { RawData, WebSocket } from 'ws';
import { ApiError, ErrorCode, invalid } from '../http/errors';
import { toApiError, type ErrorMapper } from '../http/error-handler';
import { MAX_JSON_DEPTH, jsonTextNestsDeeperThan } from '../http/json-depth';
import { validator } from '../http/validate';
import type { Logger } from '../ops/logger';
import type { RoomMetrics } from '../ops/metrics';
import { CLIENT_FRAME_TYPES, CloseCode, errorFrame, FrameType, messageFrame, type Frame } from './frames';
import type { Message, MessageStore } from './message-store';
import type { ParticipantRef } from '../auth/participant';
import type { RoomConnection, RoomHub } from './room-hub';
import { CLIENT_FRAME_SCHEMA, MAX_PAGE_SIZE, type ClientFrame, type SendMessage } from './schemas';

/** The task frames of a room (src/room-tasks), when the service runs tasks in rooms. */
export interface RoomTaskFrames {
  /** Answers the asker's TASK_CREATED. */
  request(hub: RoomHub, roomId: string, asker: ParticipantRef, data: unknown): Promise<Frame>;
  result(reporter: ParticipantRef, data: unknown): Promise<void>;
  /** A person's answer to the input request of a task of the room. */
  input(roomId: string, sender: ParticipantRef, data: unknown): Promise<void>;
}

export interface RoomSocketDeps {
  hub: RoomHub;
  tasks?: RoomTaskFrames;
  messages: MessageStore;
  readMessage: (value: unknown) => SendMessage;
  /** A reader slower than this many queued bytes is disconnected rather than buffered without end. */
  maxBufferedBytes: number;
  /** Counts a frame that writes against the sender's credential, like an HTTP write; 429 RATE_LIMITED over the limit. */
  countWrite(): Promise<void>;
  logger: Logger;
  metrics: RoomMetrics;
  /** How the parts below name their failures as the contract's errors (an outage of Temporal, say). */
  errorMappers: readonly ErrorMapper[];
}

/** The requestId of a TASK_REQUEST, for its ERROR frame, when the data has one. */
function requestIdOf(data: unknown): string | undefined {
  const requestId = (data as { requestId?: unknown } | null | undefined)?.requestId;
  return typeof requestId === 'string' ? requestId : undefined;
}

/** Messages of one client waiting to be stored; more is a flood and gets RATE_LIMITED. */
const MAX_PENDING_FRAMES = 100;

/**
 * Times a resuming socket reads a history page again after waiting for this process's insert of a
 * seq the page missed; a room written without pause could otherwise keep it waiting.
 */
const MAX_REPLAY_WAITS = 10;

/** The seqs after `after`, up to the page's last, that the page lacks. */
function seqsMissing(after: number, page: Message[]): number[] {
  const found = new Set(page.map((message) => message.seq));
  const missing: number[] = [];
  for (let seq = after + 1; seq < page[page.length - 1].seq; seq += 1) if (!found.has(seq)) missing.push(seq);
  return missing;
}

const readClientFrame = validator<ClientFrame>(CLIENT_FRAME_SCHEMA, 'frame');

/** One participant's WebSocket in a room: what it sends, and what the room delivers to it. */
export class RoomSocket implements RoomConnection {
  lastSeen = Date.now();
  /**
   * Highest seq the history replay sent: a live message at or below it was already delivered. Live
   * messages above it come once each (RoomHub.publishStored), in seq order from one process; with
   * several processes one from another may arrive after a higher seq.
   */
  private replayedSeq = 0;
  /**
   * Seqs at or below replayedSeq that the history read did not find: reserved and never stored, or
   * still being written by another process, whose live frame is then not a duplicate.
   */
  private readonly unreplayed = new Set<number>();
  /** Live frames held back while the history a resuming client missed is sent. */
  private held?: Array<{ data: Buffer; seq?: number }>;
  private heldBytes = 0;
  private pendingFrames = 0;

  constructor(
    private readonly ws: WebSocket,
    readonly roomId: string,
    readonly participant: ParticipantRef,
    private readonly deps: RoomSocketDeps,
  ) {}

  /** Joins the room; with `since`, first sends every stored message after that seq, then the live ones. */
  async start(since: number | undefined): Promise<void> {
    this.ws.on('pong', () => this.markSeen());
    this.ws.on('message', (data, isBinary) => this.receive(data, isBinary));
    this.ws.once('close', () => this.deps.hub.leave(this));
    if (since === undefined) {
      this.deps.hub.join(this);
      return;
    }
    this.held = [];
    this.deps.hub.join(this);
    try {
      await this.replay(since);
    } catch (error) {
      this.deps.logger.warn({ err: error, roomId: this.roomId }, 'resume failed');
      this.sendFrame(errorFrame(toApiError(error, this.deps.errorMappers)));
      this.ws.close(CloseCode.HISTORY_UNAVAILABLE, 'Could not read the room history');
      return;
    }
    const held = this.held;
    this.held = undefined;
    for (const frame of held) this.deliver(frame.data, frame.seq);
  }

  deliver(data: Buffer, seq?: number): void {
    if (this.held) {
      this.held.push({ data, seq });
      this.heldBytes += data.length;
      if (this.heldBytes > this.deps.maxBufferedBytes) this.dropSlowReader();
      return;
    }
    if (seq !== undefined && seq <= this.replayedSeq && !this.unreplayed.delete(seq)) return;
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(data, { binary: false });
    if (this.ws.bufferedAmount > this.deps.maxBufferedBytes) this.dropSlowReader();
  }

  ping(): void {
    this.ws.ping();
  }

  /** Closes the socket without a goodbye, for peers that stopped answering. */
  terminate(): void {
    this.ws.terminate();
  }

  close(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  private sendFrame(frame: Frame): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(frame));
  }

  private dropSlowReader(): void {
    this.deps.metrics.slowReadersCut.inc();
    this.deps.logger.warn({ roomId: this.roomId, participant: this.participant }, 'slow reader disconnected');
    this.ws.terminate();
  }

  /** Sends the stored messages after `since`, page by page. */
  private async replay(since: number): Promise<void> {
    let after = since;
    for (let waits = 0; ;) {
      const page = await this.deps.messages.page(this.roomId, { kind: 'after', seq: after }, MAX_PAGE_SIZE);
      if (page.length === 0 || this.ws.readyState !== this.ws.OPEN) return;
      const missing = seqsMissing(after, page);
      // The page's lookups may miss a message of this process that was being written meanwhile, or
      // was written while they ran: once it is, the page is read again, so the history goes out whole
      // and in order.
      const insert = waits < MAX_REPLAY_WAITS ? this.deps.hub.insertOf(this.roomId, missing) : undefined;
      if (insert) {
        waits += 1;
        await insert;
        continue;
      }
      for (const seq of missing) this.unreplayed.add(seq);
      // Straight to the socket, while live frames are held; the next page is read once this one left.
      await new Promise<void>((resolve) => {
        page.forEach((message, index) =>
          this.ws.send(JSON.stringify(messageFrame(message)), index === page.length - 1 ? () => resolve() : undefined),
        );
      });
      after = page[page.length - 1].seq;
      this.replayedSeq = after;
      if (page.length < MAX_PAGE_SIZE) return;
    }
  }

  private markSeen(): void {
    this.lastSeen = Date.now();
  }

  private receive(data: RawData, isBinary: boolean): void {
    this.markSeen();
    if (this.pendingFrames >= MAX_PENDING_FRAMES) {
      this.sendFrame(
        errorFrame(new ApiError(ErrorCode.RATE_LIMITED, 'Too many messages waiting to be stored; slow down')),
      );
      return;
    }
    this.pendingFrames += 1;
    void this.handle(data, isBinary).finally(() => {
      this.pendingFrames -= 1;
    });
  }

  private async handle(data: RawData, isBinary: boolean): Promise<void> {
    // Echoed in the ERROR frame that answers a TASK_REQUEST.
    let requestId: string | undefined;
    try {
      const frame = readClientFrame(parseFrame(data, isBinary));
      // Every frame awaits this once, and it settles at once (a memory count), so frames still reach
      // the room's queue in the order they came.
      await this.deps.countWrite();
      switch (frame.type) {
        case FrameType.MESSAGE: {
          const message = this.deps.readMessage(frame.data);
          // Queued for storage before anything else awaits: the room's queue keeps this client's order.
          await this.deps.hub.sendMessage({ roomId: this.roomId, sender: this.participant, ...message });
          return;
        }
        case FrameType.TASK_REQUEST:
          if (!this.deps.tasks) break;
          requestId = requestIdOf(frame.data);
          this.sendFrame(await this.deps.tasks.request(this.deps.hub, this.roomId, this.participant, frame.data));
          return;
        case FrameType.TASK_RESULT:
          if (!this.deps.tasks) break;
          await this.deps.tasks.result(this.participant, frame.data);
          return;
        case FrameType.TASK_INPUT:
          if (!this.deps.tasks) break;
          await this.deps.tasks.input(this.roomId, this.participant, frame.data);
          return;
      }
      throw invalid(`Unknown frame type "${frame.type}"; clients send ${CLIENT_FRAME_TYPES.join(', ')}`);
    } catch (error) {
      const apiError = toApiError(error, this.deps.errorMappers);
      if (apiError.status >= 500) this.deps.logger.error({ err: error, roomId: this.roomId }, 'frame failed');
      this.sendFrame(errorFrame(apiError, requestId));
    }
  }
}

function parseFrame(data: RawData, isBinary: boolean): unknown {
  if (isBinary) throw invalid('Frames must be JSON text, not binary');
  const text = Array.isArray(data)
    ? Buffer.concat(data).toString('utf8')
    : Buffer.from(data as Buffer).toString('utf8');
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    throw invalid('Malformed JSON frame');
  }
  if (jsonTextNestsDeeperThan(text, MAX_JSON_DEPTH))
    throw invalid(`Frames must nest at most ${MAX_JSON_DEPTH} levels deep`);
  return frame;
}
