import type { ChangeLog } from './change-log';
import { KEPT_CHANGES } from './change-log';

/** What a LiveCopy keeps up to date: read whole, or only the documents that changed. */
export interface CopiedData {
  /** Forgets everything and reads all documents again. */
  readAll(): Promise<void>;
  /** Reads the documents with these ids again (by `_id`); one that is gone leaves the copy. */
  refresh(ids: string[]): Promise<void>;
}

/** How long a change number handed out but not recorded is waited for before the copy is read whole again (its writer may have died). */
const HOLE_WAIT_MS = 2_000;
/** Rounds a request waits for updates under way before it answers from the copy as it is. */
const MAX_ROUNDS = 3;

/**
 * An in-memory copy of data FerretDB could only serve by reading whole collections, kept up to date
 * through a ChangeLog: a request reads the log's last number (one read by `_id`) and, when the copy
 * is behind, the changes since it by `_id`, and refreshes only those documents. So every process
 * shows a change recorded before a request from that request on, and the cost of catching up is
 * that of the changes, not of the collection. The copy is read whole at the first request, when it
 * is further behind than the log keeps, when a change number stays unrecorded, and at `maxAgeMs`.
 */
export class LiveCopy {
  private seq = -1;
  private readAt = 0;
  private holeSince?: number;
  private updating?: Promise<void>;

  constructor(
    private readonly log: ChangeLog,
    private readonly data: CopiedData,
    private readonly maxAgeMs: number,
  ) {}

  /** Brings the copy up to every change recorded before this call; updates run one at a time. */
  async catchUp(): Promise<void> {
    const wanted = await this.log.lastSeq();
    for (let round = 0; round < MAX_ROUNDS && (this.seq < wanted || this.tooOld()); round += 1) {
      if (!this.updating) this.updating = this.update(wanted).finally(() => (this.updating = undefined));
      await this.updating;
    }
  }

  private tooOld(): boolean {
    return Date.now() - this.readAt >= this.maxAgeMs;
  }

  private async update(wanted: number): Promise<void> {
    if (this.seq < 0 || this.tooOld() || wanted - this.seq > KEPT_CHANGES / 2) return this.readAll();
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
    if (Date.now() - this.holeSince >= HOLE_WAIT_MS) await this.readAll();
  }

  private async readAll(): Promise<void> {
    const [seq, readAt] = [await this.log.lastSeq(), Date.now()];
    await this.data.readAll();
    [this.seq, this.readAt, this.holeSince] = [seq, readAt, undefined];
  }
}
