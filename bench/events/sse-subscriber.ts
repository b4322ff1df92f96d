import { request, type Dispatcher } from 'undici';

/** One event of a composition's stream as the bench keeps it: what the checks and the delays need. */
export interface ReceivedEvent {
  seq: number;
  taskId: string;
  type: string;
  message?: string;
}

/**
 * One open `text/event-stream` response read with undici, parsed as it comes. Each event is handed
 * to `onEvent` with the time its chunk arrived.
 */
export class SseSubscriber {
  readonly events: ReceivedEvent[] = [];
  /** Events whose `id:` line was not the one `idOf` gives their data. */
  readonly badIds: string[] = [];
  /** Settles when the server ends the stream; rejects if it fails for another reason than `close()`. */
  readonly ended: Promise<void>;
  /** The server ended the stream (rather than the bench closing it). */
  endedByServer = false;
  private readonly abort = new AbortController();

  private constructor(
    body: Dispatcher.ResponseData['body'],
    private readonly onEvent: (event: ReceivedEvent, arrivedAt: number, subscriber: SseSubscriber) => void,
    private readonly idOf: (event: ReceivedEvent) => string,
  ) {
    this.ended = this.read(body);
  }

  static async open(
    url: string,
    headers: Record<string, string>,
    dispatcher: Dispatcher,
    idOf: (event: ReceivedEvent) => string,
    onEvent: (event: ReceivedEvent, arrivedAt: number, subscriber: SseSubscriber) => void = () => undefined,
  ): Promise<SseSubscriber> {
    const abort = new AbortController();
    const response = await request(url, {
      headers: { accept: 'text/event-stream', ...headers },
      dispatcher,
      signal: abort.signal,
    });
    const contentType = String(response.headers['content-type'] ?? '');
    if (response.statusCode !== 200 || !contentType.startsWith('text/event-stream')) {
      const text = await response.body.text();
      throw new Error(`GET ${url} answered ${response.statusCode} (${contentType}): ${text.slice(0, 300)}`);
    }
    const subscriber = new SseSubscriber(response.body, onEvent, idOf);
    subscriber.abort.signal.addEventListener('abort', () => abort.abort());
    return subscriber;
  }

  /** The last seq received, 0 before any. */
  get lastSeq(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  close(): void {
    this.abort.abort();
  }

  private async read(body: Dispatcher.ResponseData['body']): Promise<void> {
    body.setEncoding('utf8');
    let buffer = '';
    try {
      for await (const chunk of body as AsyncIterable<string>) {
        const arrivedAt = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          this.parse(buffer.slice(0, end), arrivedAt);
          buffer = buffer.slice(end + 2);
        }
      }
      this.endedByServer = true;
    } catch (error) {
      if (!this.abort.signal.aborted) throw error;
    }
  }

  private parse(block: string, arrivedAt: number): void {
    let id: string | undefined;
    let data: string | undefined;
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data = line.slice(6);
    }
    if (data === undefined) return;
    const parsed = JSON.parse(data) as ReceivedEvent;
    const event: ReceivedEvent = {
      seq: parsed.seq,
      taskId: parsed.taskId,
      type: parsed.type,
      ...(parsed.message === undefined ? {} : { message: parsed.message }),
    };
    if (id !== this.idOf(event)) this.badIds.push(String(id));
    this.events.push(event);
    this.onEvent(event, arrivedAt, this);
  }
}
