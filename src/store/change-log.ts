import { isDuplicateKey, type Store } from './mongo';

/** Per kind of data, `{_id: kind, seq}`: the last change number handed out. */
export const CHANGE_COUNTERS_COLLECTION = 'change_counters';
/** Per change, `{_id: "kind:seq", id}`: which document changed. */
export const CHANGES_COLLECTION = 'changes';

/** Attempts at recording a change whose number another process also got (FerretDB's counter is not atomic). */
const MAX_RECORD_ATTEMPTS = 10;
/** Changes kept: a copy further behind than this is read whole again (LiveCopy), so older ones are deleted. */
export const KEPT_CHANGES = 10_000;

interface ChangeDocument {
  _id: string;
  id: string;
  at: Date;
}

/**
 * Which documents of one kind changed, numbered, for the processes that keep a copy of that data
 * in memory (LiveCopy). Everything is read by `_id`, which FerretDB serves without reading whole
 * collections: the counter, and each change by its number.
 */
export class ChangeLog {
  constructor(
    private readonly store: Store,
    readonly kind: string,
  ) {}

  private get counters() {
    return this.store.collection<{ _id: string; seq: number }>(CHANGE_COUNTERS_COLLECTION);
  }

  private get changes() {
    return this.store.collection<ChangeDocument>(CHANGES_COLLECTION);
  }

  /**
   * Records that document `id` changed; called after the write. On FerretDB two writers may get the
   * same number: the change's `_id` refuses the second, which takes the next one. A change that
   * could not be recorded (the store failing right after the write) reaches the copies when they are
   * read again for their age; the write itself is stored, so it does not fail for it.
   */
  async record(id: string): Promise<void> {
    for (let attempt = 0; attempt < MAX_RECORD_ATTEMPTS; attempt += 1) {
      try {
        const counter = await this.counters.findOneAndUpdate(
          { _id: this.kind },
          { $inc: { seq: 1 } },
          { upsert: true, returnDocument: 'after' },
        );
        await this.changes.insertOne({ _id: this.changeId(counter!.seq), id, at: new Date() });
        await this.changes.deleteOne({ _id: this.changeId(counter!.seq - KEPT_CHANGES) });
        return;
      } catch (error) {
        if (!isDuplicateKey(error)) return;
      }
    }
  }

  /** The number of the last change handed out; 0 before any. */
  async lastSeq(): Promise<number> {
    return (await this.counters.findOne({ _id: this.kind }))?.seq ?? 0;
  }

  /** The changes numbered `from` to `through`, in order; undefined for a number handed out and not (yet) recorded. */
  async read(from: number, through: number): Promise<Array<string | undefined>> {
    const seqs = Array.from({ length: Math.max(0, through - from + 1) }, (_, index) => from + index);
    const changes = await Promise.all(seqs.map((seq) => this.changes.findOne({ _id: this.changeId(seq) })));
    return changes.map((change) => change?.id);
  }

  private changeId(seq: number): string {
    return `${this.kind}:${seq}`;
  }
}
