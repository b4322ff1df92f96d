import { testStack } from './test-stack';
import { STUCK_AFTER_MS } from './until';

/** One message of a Server-Sent Events stream: its id and its data, parsed as JSON. */
export interface StreamedEvent {
  id?: string;
  data: any;
}

/** An open `text/event-stream` response, read as it comes. */
export class EventStreamReader {
  readonly events: StreamedEvent[] = [];
  /** Comment lines (heartbeats) seen. */
  comments = 0;
  /** The server ended the stream (rather than the reader cutting it). */
  endedByServer = false;
  /** Settles when the server ends the stream (or the reader aborts it). */
  readonly closed: Promise<void>;
  private readonly abort = new AbortController();
  private listeners: Array<() => void> = [];

  private constructor(
    readonly status: number,
    readonly contentType: string,
    body: ReadableStream<Uint8Array> | null,
  ) {
    this.closed = this.read(body);
  }

  /** Opens `path` on the service under test (or `baseUrl`): a GET, or a POST of `body` as JSON (A2A's streams). */
  static async open(
    path: string,
    {
      apiKey = 'admin',
      lastEventId,
      baseUrl,
      body,
      headers: extraHeaders = {},
    }: {
      apiKey?: string;
      lastEventId?: string;
      baseUrl?: string;
      body?: unknown;
      headers?: Record<string, string>;
    } = {},
  ): Promise<EventStreamReader> {
    const stack = testStack();
    const abort = new AbortController();
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      'x-api-key': apiKey === 'admin' ? stack.adminKey : apiKey,
      ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...extraHeaders,
    };
    const response = await fetch(`${baseUrl ?? stack.baseUrl}${path}`, {
      headers,
      signal: abort.signal,
      ...(body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) }),
    });
    const reader = new EventStreamReader(response.status, response.headers.get('content-type') ?? '', response.body);
    reader.abort.signal.addEventListener('abort', () => abort.abort());
    return reader;
  }

  /** Cuts the connection, as a network failure would. */
  disconnect(): void {
    this.abort.abort();
  }

  /** The data of every event so far. */
  get data(): any[] {
    return this.events.map((event) => event.data);
  }

  /** The id of every event so far. */
  get ids(): Array<string | undefined> {
    return this.events.map((event) => event.id);
  }

  /** Resolves once the server ended the stream; otherwise cuts it after `timeoutMs` and rejects, naming the events so far. */
  async closedWithin(timeoutMs = STUCK_AFTER_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        this.disconnect();
        reject(new Error(`the stream stayed open ${timeoutMs} ms; events so far: ${JSON.stringify(this.ids)}`));
      }, timeoutMs);
    });
    try {
      await Promise.race([this.closed, late]);
    } finally {
      clearTimeout(timer);
    }
    if (!this.endedByServer) throw new Error('the stream was cut by the reader, not ended by the server');
  }

  /** Resolves once `predicate` holds for the events so far, or rejects after `timeoutMs`. */
  async waitFor(predicate: (events: StreamedEvent[]) => boolean, timeoutMs = STUCK_AFTER_MS): Promise<void> {
    if (predicate(this.events)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((listener) => listener !== check);
        reject(new Error(`waited ${timeoutMs} ms; events so far: ${JSON.stringify(this.data)}`));
      }, timeoutMs);
      const check = () => {
        if (!predicate(this.events)) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((listener) => listener !== check);
        resolve();
      };
      this.listeners.push(check);
    });
  }

  private async read(body: ReadableStream<Uint8Array> | null): Promise<void> {
    if (!body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          this.parse(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
      this.endedByServer = !this.abort.signal.aborted;
    } catch (error) {
      if (!this.abort.signal.aborted) throw error;
    }
  }

  private parse(block: string): void {
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments += 1;
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length === 0) return;
    this.events.push({ ...(id === undefined ? {} : { id }), data: JSON.parse(data.join('\n')) });
    for (const listener of [...this.listeners]) listener();
  }
}

/**
 * Opens streams as EventStreamReader.open does, and cuts every one still open after each test, so
 * that a failed test leaves no connection behind.
 */
export function useEventStreams(): typeof EventStreamReader.open {
  const opened: EventStreamReader[] = [];
  afterEach(() => {
    for (const reader of opened.splice(0)) reader.disconnect();
  });
  return async (path, options) => {
    const reader = await EventStreamReader.open(path, options);
    opened.push(reader);
    return reader;
  };
}
