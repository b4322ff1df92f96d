import { ApiError } from '../http/errors';
import type { ImportWarning } from '../registry/capability-importer';
import { rejectedSchemaOf } from '../registry/registration';
import { REGISTRATION_LIMITS } from '../registry/registration-schema';
import type { SchemaChecks } from '../user-schemas/schema-checks';

/** The most entries of one category a registration holds, and the most left-out entries named one by one. */
const CAP = REGISTRATION_LIMITS.capabilityEntries;

/**
 * The entries of one category of an import, kept as they are read: those that pass a registration's
 * checks, the first of each name, until the category holds as many as a registration does. Each of
 * the first CAP entries left out for a problem is named in the warnings; the entries past those, and
 * those past a full category, are each named once together. Past CAP entries whose schemas do not
 * compile (each a compilation on a check thread), the category is not read further. So a source of
 * endless entries costs what a full registration does, in work, memory and warnings. An A2A agent's
 * skills pass here too.
 */
export class KeptEntries<T extends { name: string }> {
  readonly kept: T[] = [];
  private readonly names = new Set<string>();
  private rejected = 0;
  private uncompiled = 0;
  private cut = false;

  constructor(
    private readonly category: string,
    private readonly warnings: ImportWarning[],
    private readonly check: (entry: T) => unknown,
    private readonly checks: SchemaChecks,
  ) {}

  /**
   * Checks `entries` in order while the category has room; `more` says the source has entries
   * after them. False once the category is full: nothing more of it is worth reading.
   */
  async take(entries: readonly T[], more: boolean): Promise<boolean> {
    for (const entry of entries) {
      if (this.isFull()) return this.stopReading(true);
      await this.offer(entry);
    }
    return !this.isFull() || this.stopReading(more);
  }

  private async offer(entry: T): Promise<void> {
    const problem = await this.problemOf(entry);
    if (problem === undefined) {
      this.kept.push(entry);
      this.names.add(entry.name);
      return;
    }
    this.leaveOut(entry.name, problem);
  }

  /** An entry left out for `problem`: named in the warnings while fewer than CAP were, then all others once together. */
  leaveOut(name: string, problem: string): void {
    this.rejected += 1;
    if (this.rejected <= CAP) this.warnings.push({ capability: `${this.category}/${name}`, message: problem });
    else if (this.rejected === CAP + 1)
      this.warnings.push({
        capability: this.category,
        message: `more than ${CAP} ${this.category} fail the checks: the others that fail them are left out unnamed`,
      });
  }

  /** Nothing more of the category is worth reading: it holds as many as a registration, or CAP entries had schemas that do not compile. */
  private isFull(): boolean {
    return this.kept.length >= CAP || this.uncompiled > CAP;
  }

  /** Names once, when the source has more, why the rest of the category is not read; always false. */
  private stopReading(more: boolean): false {
    if (more && !this.cut) {
      this.cut = true;
      this.warnings.push({
        capability: this.category,
        message:
          this.kept.length >= CAP
            ? `more than ${CAP} ${this.category}: the first ${CAP} that pass the checks are kept, the others are not read`
            : `more than ${CAP} ${this.category} have schemas that do not compile: the others are not read`,
      });
    }
    return false;
  }

  private async problemOf(entry: T): Promise<string | undefined> {
    try {
      this.check(entry);
    } catch (error) {
      if (error instanceof ApiError) return error.message;
      throw error;
    }
    if (this.names.has(entry.name)) return 'a second entry of the same name';
    const rejected = await rejectedSchemaOf(entry as Parameters<typeof rejectedSchemaOf>[0], this.checks);
    if (!rejected) return undefined;
    this.uncompiled += 1;
    return `invalid ${rejected.member}: ${rejected.error.message}`;
  }
}
