import { PassThrough } from 'node:stream';
import type { Context } from 'koa';

/** A comment line this often keeps proxies and load balancers from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;
/** What an EventSource waits before it reconnects, as the stream tells it. */
const RETRY_MS = 2_000;

/** One Server-Sent Events response: events with ids, heartbeat comments, an end. */
export class SseStream {
  private readonly body = new PassThrough();
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;

  /** Answers `ctx` with the stream; `onClose` runs once, when the client left or the stream ended. */
  constructor(ctx: Context, onClose: () => void, heartbeatMs = HEARTBEAT_MS) {
    ctx.status = 200;
    ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
    ctx.set('Cache-Control', 'no-cache, no-transform');
    // Proxies that buffer responses (nginx) would hold events back.
    ctx.set('X-Accel-Buffering', 'no');
    ctx.body = this.body;
    this.body.write(`retry: ${RETRY_MS}\n\n`);
    this.heartbeat = setInterval(() => this.body.write(': keep-alive\n\n'), heartbeatMs);
    const close = () => {
      if (this.closed) return;
      this.closed = true;
      clearInterval(this.heartbeat);
      onClose();
    };
    ctx.res.once('close', close);
    this.body.once('close', close);
  }

  send(id: string, data: unknown): void {
    if (!this.closed) this.body.write(`id: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  end(): void {
    this.body.end();
  }
}
