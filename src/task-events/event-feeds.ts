import type { Logger } from '../ops/logger';
import type { TaskEventStore } from './event-store';
import type { LogChanges } from './log-changes';
import { LogReader, logIdOfSource, type LogSource, type LogTasks } from './log-reader';
import type { TaskEvent } from './task-event';

/**
 * How often a feed reads its log's counter for events written by other processes, while the log
 * grows. An event written in this process wakes its feed at once (LogChanges.logged).
 */
export const FEED_POLL_MS = 200;
/**
 * The slowest a feed reads an idle log (each idle read doubles the wait): a task that waits hours
 * for its agent costs its streams a read every 1.6 s, not five a second.
 */
export const IDLE_FEED_POLL_MS = 1_600;

/** How often a feed reads a log for events written by other processes: first, then twice as long each idle round, up to last. */
export interface PollSchedule {
  firstMs: number;
  lastMs: number;
}

/** The polls of a feed read by streams: a report written elsewhere shows within 200 ms while the log grows. */
const STREAM_POLLS: PollSchedule = { firstMs: FEED_POLL_MS, lastMs: IDLE_FEED_POLL_MS };

export interface Subscriber {
  /** Only this task's events (a task's stream in its composition's log). */
  taskId?: string;
  /**
   * Waits for the task's end (or an input request, which ends a call that cannot answer it) and
   * shows nothing on the way, as a waiting lookup (TaskWaits) does: events written by other
   * processes may reach it on the schedule of such a lookup (`endPolls`). A feed all of whose
   * subscribers wait so reads the log that much less often.
   */
  waitsForEnd?: boolean;
  /** Events with a greater seq only. */
  after: number;
  /** The log does not exist: nothing will come. */
  missing(): void;
  deliver(events: TaskEvent[]): void;
  /** Every ending event the subscriber waits for was delivered. */
  ended(): void;
}

/**
 * The live logs of this process: one feed per log with subscribers, however many streams read it,
 * so a hundred streams of one composition cost the store what one does.
 */
export class TaskEventFeeds {
  private readonly feeds = new Map<string, Feed>();

  /**
   * `streamPolls` for logs that a stream reads, `endPolls` for those only waited on (the service
   * gives TaskChanges.rereads, a waiting lookup's); both default to a stream's.
   */
  constructor(
    private readonly taskStore: LogTasks,
    private readonly eventStore: TaskEventStore,
    private readonly changes: LogChanges,
    private readonly logger: Logger,
    private readonly polls: { streamPolls?: PollSchedule; endPolls?: PollSchedule } = {},
  ) {}

  /** Streams the log to `subscriber` from its `after`; returns the unsubscribe. */
  subscribe(source: LogSource, subscriber: Subscriber): () => void {
    const logId = logIdOfSource(source);
    let feed = this.feeds.get(logId);
    if (!feed) {
      const readerFrom = (after: number) => new LogReader(source, this.taskStore, this.eventStore, after);
      const { streamPolls = STREAM_POLLS, endPolls = streamPolls } = this.polls;
      feed = new Feed(readerFrom, subscriber.after, this.changes, this.logger, { streamPolls, endPolls }, () =>
        this.feeds.delete(logId),
      );
      this.feeds.set(logId, feed);
    }
    return feed.add(subscriber);
  }
}

class Feed {
  private readonly subscribers = new Set<Subscriber>();
  private wake?: () => void;
  private woken = false;
  private running = false;
  /** A round is reading the store: events handed over meanwhile wait in `handedOver` for its end. */
  private reading = false;
  private handedOver: TaskEvent[] = [];

  /** Holds what was read of the log since the earliest point a subscriber asked for. */
  private reader: LogReader;

  constructor(
    private readonly readerFrom: (after: number) => LogReader,
    firstAfter: number,
    private readonly changes: LogChanges,
    private readonly logger: Logger,
    private readonly polls: { streamPolls: PollSchedule; endPolls: PollSchedule },
    private readonly closed: () => void,
  ) {
    // A stream resumed from Last-Event-ID reads from there, not from the log's start.
    this.reader = readerFrom(firstAfter);
  }

  add(subscriber: Subscriber): () => void {
    this.subscribers.add(subscriber);
    // One who asks for events the feed did not read starts it again from there; the others' cursors
    // keep them from getting any twice. What the feed already read goes out at once; the rest as the loop reads it.
    if (subscriber.after < this.reader.startAfter) this.reader = this.readerFrom(subscriber.after);
    else if (this.reader.exists) this.deliver(subscriber, this.reader.events);
    if (!this.running) void this.run();
    else this.poke();
    return () => {
      this.subscribers.delete(subscriber);
      this.poke();
    };
  }

  private async run(): Promise<void> {
    this.running = true;
    const stopListening = this.changes.onLogged(this.reader.logId, (event) => this.handOver(event));
    let idleRounds = 0;
    try {
      while (this.subscribers.size > 0) {
        this.woken = false;
        this.reading = true;
        try {
          const reader = this.reader;
          const events = await reader.next();
          // Started again from an earlier point meanwhile: the new reader's first round delivers.
          if (reader !== this.reader) continue;
          idleRounds = events.length > 0 ? 0 : idleRounds + 1;
          if (!this.reader.exists) {
            for (const subscriber of this.subscribers) subscriber.missing();
            this.subscribers.clear();
            break;
          }
          this.deliverToAll(events);
          if (this.reader.done) break;
        } catch (error) {
          this.logger.warn({ err: error, logId: this.reader.logId }, 'reading a task event log failed; trying again');
        } finally {
          this.reading = false;
        }
        this.takeHandedOver();
        if (!this.woken) await this.sleep(this.waitMs(idleRounds));
      }
    } finally {
      stopListening();
      this.running = false;
      this.closed();
    }
  }

  /**
   * An event of the log stored by this process (`event`, when its writer knew it whole): taken
   * without a read when it is the next one, else read by a round started at once.
   */
  private handOver(event: TaskEvent | undefined): void {
    if (!event) return this.poke();
    this.handedOver.push(event);
    if (!this.reading) this.takeHandedOver();
  }

  /** Delivers the events handed over that follow what was read; one that does not follow has a round read it. */
  private takeHandedOver(): void {
    const events = this.handedOver.sort((a, b) => a.seq - b.seq);
    this.handedOver = [];
    const taken: TaskEvent[] = [];
    let ahead = false;
    for (const event of events) {
      const offered = this.reader.offer(event);
      if (offered === 'taken') taken.push(event);
      else if (offered === 'ahead') ahead = true;
    }
    this.deliverToAll(taken);
    // A round then reads what is missing, or ends the feed its last subscriber left.
    if (ahead || this.subscribers.size === 0 || this.reader.done) this.poke();
  }

  /**
   * The wait before the next read: a hole in the log is looked at again soon, its event may land any
   * moment; else each round that found nothing waits twice as long as the last, on the schedule of
   * the subscribers (a waiting one's only when all of them wait for the end).
   */
  private waitMs(idleRounds: number): number {
    const { streamPolls, endPolls } = this.polls;
    if (this.reader.waitingSince !== undefined) return streamPolls.firstMs;
    const waits = [...this.subscribers].every((subscriber) => subscriber.waitsForEnd) ? endPolls : streamPolls;
    return Math.min(waits.firstMs * 2 ** idleRounds, Math.max(waits.firstMs, waits.lastMs));
  }

  private deliverToAll(events: readonly TaskEvent[]): void {
    for (const subscriber of [...this.subscribers]) this.deliver(subscriber, events);
  }

  private deliver(subscriber: Subscriber, events: readonly TaskEvent[]): void {
    if (!this.subscribers.has(subscriber)) return;
    const wanted = events.filter(
      (event) =>
        event.seq > subscriber.after && (subscriber.taskId === undefined || event.taskId === subscriber.taskId),
    );
    if (wanted.length > 0) {
      subscriber.after = wanted.at(-1)!.seq;
      subscriber.deliver(wanted);
    }
    const ended = subscriber.taskId === undefined ? this.reader.done : this.reader.hasEnded(subscriber.taskId);
    if (ended) {
      this.subscribers.delete(subscriber);
      subscriber.ended();
    }
  }

  private poke(): void {
    this.woken = true;
    this.wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }
}
