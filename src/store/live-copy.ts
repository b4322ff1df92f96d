import type { ChangeLog } from './change-log';
import { KEPT_CHANGES } from './change-log';

/** What a LiveCopy keeps up to date: read whole (loaded, then installed at once), or only the documents that changed. */
export interface CopiedData<Loaded> {
  /** Reads all documents; changes nothing yet. */
  load(): Promise<Loaded>;
  /** Replaces everything with what `load` read. */
  install(loaded: Loaded): void;
  /** Reads the documents with these ids again (by `_id`); one that is gone leaves the copy. */
  refresh(ids: string[]): Promise<void>;
}

/** How long a change number handed out but not recorded is waited for before the copy is read whole again (its writer may have died). */
const HOLE_WAIT_MS = 2_000;
/** Rounds a request waits for a missing change number before it answers from the copy as it is. */
const MAX_ROUNDS = 3;

/** How far a catch-up may trust the log's last number read for another request. */
export interface Freshness {
  /**
   * A read of the log's last number that began less than this many ms ago serves, and no change
   * recorded through this process since it began (`changedHere`) was missed: the copy shows the
   * changes recorded before that read. Without it, the log's last number is read after the call began.
   */
  readWithinMs?: number;
}

/** One read of the log's last number: when it began, and how many changes this process had recorded then. */
interface CounterRead<Seq> {
  seq: Seq;
  beganAt: number;
  changesHere: number;
}

/**
 * An in-memory copy of data FerretDB could only serve by reading whole collections, kept up to date
 * through a ChangeLog: a request reads the log's last number (one read by `_id`) and, when the copy
 * is behind, the changes since it by `_id`, and refreshes only those documents. So every process
 * shows a change recorded before a request from that request on, and the cost of catching up is
 * that of the changes, not of the collection. Updates run one at a time.
 *
 * The copy is read whole, with requests waiting, at the first request, when it is further behind
 * than the log keeps, and when a change number stays unrecorded; and every `maxAgeMs` in the
 * background (a change whose record failed), while requests go on with the copy as it is.
 *
 * A caller that accepts a bound on freshness (`Freshness.readWithinMs`) is served from a recent read
 * of the log's number, without a store read of its own.
 */
export class LiveCopy<Loaded> {
  private seq = -1;
  private readAt = 0;
  private holeSince?: number;
  private queue: Promise<unknown> = Promise.resolve();
  private renewing = false;
  /** The read of the log's last number under way, and the one that follows it (lastSeqSince). */
  private counterRead?: CounterRead<Promise<number>>;
  private nextCounterRead?: Promise<number>;
  /** The latest-begun read of the log's last number that answered. */
  private lastRead?: CounterRead<number>;
  /** Counts the changes recorded through this process: a read begun before one may not hold it. */
  private changesHere = 0;

  constructor(
    private readonly log: ChangeLog,
    private readonly data: CopiedData<Loaded>,
    private readonly maxAgeMs: number,
  ) {}

  /** Brings the copy up to every change recorded before this call, or before a read `freshness` accepts. */
  async catchUp(freshness: Freshness = {}): Promise<void> {
    const recent = freshness.readWithinMs === undefined ? undefined : this.recentRead(freshness.readWithinMs);
    const wanted = await (recent ?? this.lastSeqSince());
    if (this.seq >= 0 && Date.now() - this.readAt >= this.maxAgeMs) this.renewInBackground();
    for (let round = 0; round < MAX_ROUNDS && this.seq < wanted; round += 1)
      await this.oneAtATime(() => this.update(wanted));
  }

  /** Told of a change recorded through this process: reads of the log's number begun before it no longer serve a bounded catch-up. */
  changedHere(): void {
    this.changesHere += 1;
  }

  /** The log's last number of a read, answered or under way, that began less than `withinMs` ago and missed no change of this process. */
  private recentRead(withinMs: number): number | Promise<number> | undefined {
    const since = Date.now() - withinMs;
    for (const read of [this.lastRead, this.counterRead])
      if (read && read.beganAt > since && read.changesHere === this.changesHere) return read.seq;
    return undefined;
  }

  /**
   * The log's last number, read after this call began. Callers that arrive while a read is under
   * way (it may have begun before them) share the one read that starts when it ends: a list loop of
   * many requests reads the counter about once per round trip, not once per request, and leaves
   * the store's connections to other callers.
   */
  private lastSeqSince(): Promise<number> {
    if (!this.counterRead) return this.readCounter();
    this.nextCounterRead ??= this.counterRead.seq
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        this.nextCounterRead = undefined;
        return this.readCounter();
      });
    return this.nextCounterRead;
  }

  private readCounter(): Promise<number> {
    const [beganAt, changesHere] = [Date.now(), this.changesHere];
    const read: CounterRead<Promise<number>> = {
      seq: this.log.lastSeq().finally(() => {
        if (this.counterRead === read) this.counterRead = undefined;
      }),
      beganAt,
      changesHere,
    };
    this.counterRead = read;
    read.seq.then(
      (seq) => {
        if (!this.lastRead || read.beganAt >= this.lastRead.beganAt) this.lastRead = { ...read, seq };
      },
      () => undefined,
    );
    return read.seq;
  }

  private oneAtATime<T>(step: () => T | Promise<T>): Promise<T> {
    const run = this.queue.then(step);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async update(wanted: number): Promise<void> {
    if (this.seq >= wanted) return;
    if (this.seq < 0 || wanted - this.seq > KEPT_CHANGES / 2) return this.install(...(await this.loadWhole()));
    const changed = await this.log.read(this.seq + 1, wanted);
    await this.data.refresh([...new Set(changed.filter((id): id is string => id !== undefined))]);
    const missing = changed.indexOf(undefined);
    if (missing === -1) {
      this.seq = wanted;
      this.holeSince = undefined;
      return;
    }
    this.seq += missing;
    this.holeSince ??= Date.now();
    if (Date.now() - this.holeSince >= HOLE_WAIT_MS) this.install(...(await this.loadWhole()));
  }

  /** The log's number first: a change recorded while the documents are read is applied again after. */
  private async loadWhole(): Promise<[number, number, Loaded]> {
    const [seq, readAt] = [await this.log.lastSeq(), Date.now()];
    return [seq, readAt, await this.data.load()];
  }

  private install(seq: number, readAt: number, loaded: Loaded): void {
    this.data.install(loaded);
    [this.seq, this.readAt, this.holeSince] = [seq, readAt, undefined];
  }

  private renewInBackground(): void {
    if (this.renewing) return;
    this.renewing = true;
    this.loadWhole()
      .then((whole) => this.oneAtATime(() => this.install(...whole)))
      .catch(() => undefined)
      .finally(() => (this.renewing = false));
  }
}
