import type { Message } from './records';
import { socketProtocols, type Credentials } from './session';

/** Waits between reconnections: doubling from the first, up to the last. */
const FIRST_RETRY_MS = 500;
const LAST_RETRY_MS = 8_000;
/**
 * Handshakes in a row that fail before the socket opens, after which the page stops trying: a
 * browser cannot read the refusal, and an admin or service key is refused every time.
 */
const MAX_REFUSALS = 4;

export interface RoomFrameHandlers {
  message(message: Message): void;
  /** Any other frame (SYSTEM, TASK_CREATED, ERROR), each once. */
  frame(type: string, data: Record<string, unknown>): void;
  /** The socket is open or closed: `retryInMs` when it will be opened again. */
  state(open: boolean, retryInMs?: number): void;
}

/**
 * A room's WebSocket that reconnects by itself and resumes after the last seq it delivered
 * (`since`), so the page gets every message once: the service sends what the socket missed, then
 * live ones, and a seq already delivered (by the history too) is dropped, as is a repeated
 * task_update id. (A message stored through another API process may come after a higher seq: it is
 * shown, not dropped.)
 */
export class RoomConnection {
  private socket?: WebSocket;
  private retryMs = FIRST_RETRY_MS;
  private refusals = 0;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private closed = false;
  private readonly seenUpdates = new Set<string>();
  private readonly seenSeqs: Set<number>;

  constructor(
    private readonly roomId: string,
    private readonly credentials: Credentials,
    private readonly handlers: RoomFrameHandlers,
    /** The seqs the page shows already (its history). */
    shown: Iterable<number>,
  ) {
    this.seenSeqs = new Set(shown);
    this.lastSeq = Math.max(0, ...this.seenSeqs);
  }
  private lastSeq: number;

  open(): void {
    const url = new URL(`/parties/chat-server/${encodeURIComponent(this.roomId)}`, location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('since', String(this.lastSeq));
    const socket = new WebSocket(url, socketProtocols(this.credentials));
    this.socket = socket;
    let opened = false;
    socket.onopen = () => {
      opened = true;
      this.refusals = 0;
      this.retryMs = FIRST_RETRY_MS;
      this.handlers.state(true);
    };
    socket.onmessage = (event: MessageEvent<string>) => this.receive(JSON.parse(event.data) as RoomFrame);
    socket.onclose = () => {
      if (this.socket !== socket || this.closed) return;
      this.refusals = opened ? 0 : this.refusals + 1;
      if (this.refusals >= MAX_REFUSALS) return this.handlers.state(false);
      this.handlers.state(false, this.retryMs);
      this.retryTimer = setTimeout(() => this.open(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, LAST_RETRY_MS);
    };
  }

  /** Sends a frame; false when the socket is not open (the page says so). */
  send(type: string, data: Record<string, unknown>): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify({ type, data }));
    return true;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.socket?.close();
  }

  private receive(frame: RoomFrame): void {
    if (frame.type === 'MESSAGE') {
      const message = frame.data as unknown as Message;
      if (this.seenSeqs.has(message.seq)) return;
      this.seenSeqs.add(message.seq);
      this.lastSeq = Math.max(this.lastSeq, message.seq);
      this.handlers.message(message);
      return;
    }
    const id = frame.data.id;
    if (frame.data.event === 'task_update' && typeof id === 'string') {
      if (this.seenUpdates.has(id)) return;
      this.seenUpdates.add(id);
    }
    this.handlers.frame(frame.type, frame.data);
  }
}

interface RoomFrame {
  type: string;
  data: Record<string, unknown>;
}
