import type { Context } from 'koa';
import type { Gauge } from 'prom-client';
import type { Subscriber, TaskEventFeeds } from './event-feeds';
import type { LogSource } from './log-reader';
import { SseStream } from './sse';

export interface LogStreamDeps {
  feeds: TaskEventFeeds;
  /** Counts the event streams open on this process. */
  streamsOpen: Gauge;
  heartbeatMs?: number;
}

/**
 * A Server-Sent Events answer that follows one event log (`GET /tasks/{taskId}/events`, A2A's task
 * streams): counted in `streamsOpen` while it is open, it stops following the log when the client
 * leaves, and ends with the log, or at once when there is none.
 */
export class LogStream {
  private readonly sse: SseStream;
  private closed = false;
  private unsubscribe: () => void = () => undefined;

  constructor(
    ctx: Context,
    private readonly deps: LogStreamDeps,
  ) {
    deps.streamsOpen.inc();
    this.sse = new SseStream(
      ctx,
      () => {
        this.closed = true;
        deps.streamsOpen.dec();
        this.unsubscribe();
      },
      deps.heartbeatMs,
    );
  }

  send(id: string, data: unknown): void {
    this.sse.send(id, data);
  }

  end(): void {
    this.sse.end();
  }

  /** Hands `deliver` each batch of the log's events after `after` (only `taskId`'s, when given), for it to send. */
  follow(source: LogSource, subscriber: Pick<Subscriber, 'taskId' | 'after' | 'deliver'>): void {
    if (this.closed) return;
    this.unsubscribe = this.deps.feeds.subscribe(source, {
      ...subscriber,
      missing: () => this.end(),
      ended: () => this.end(),
    });
  }
}
