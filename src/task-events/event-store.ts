import type { IndexDescription } from 'mongodb';
import { isDuplicateKey, type Store } from '../store/mongo';
import type { LoggedEvent, TaskEventType } from './task-event';

export const TASK_EVENTS_COLLECTION = 'task_events';

/**
 * One event of a log. `_id` is derived from the log and the seq, so a reader finds an event by `_id`
 * alone (src/store/mongo.ts) and two writers holding the same seq cannot both store it. `data` is
 * the event's own members as JSON text: an input or an inputSchema may hold keys with '.' or '$'.
 * The event that ends a task in a composition is stored without data: the task holds its outcome.
 */
export interface TaskEventDocument {
  _id: string;
  logId: string;
  seq: number;
  taskId: string;
  type: TaskEventType;
  at: Date;
  data?: string;
}

export const eventDocumentId = (logId: string, seq: number): string => `${logId}:${seq}`;

/** The stored events of every log. Seqs are handed out by the log writer (LogWriter), which keeps the counters. */
export class TaskEventStore {
  constructor(private readonly store: Store) {}

  /** None: every read is by `_id`. */
  static indexes(): IndexDescription[] {
    return [];
  }

  private get events() {
    return this.store.collection<TaskEventDocument>(TASK_EVENTS_COLLECTION);
  }

  /** Stores the event at `seq`; undefined when that seq is taken (two writers were given it). */
  async insert(
    logId: string,
    seq: number,
    taskId: string,
    event: LoggedEvent | { type: TaskEventType },
  ): Promise<TaskEventDocument | undefined> {
    const { type, ...data } = event;
    const document: TaskEventDocument = {
      _id: eventDocumentId(logId, seq),
      logId,
      seq,
      taskId,
      type,
      at: new Date(),
      ...(Object.keys(data).length === 0 ? {} : { data: JSON.stringify(data) }),
    };
    try {
      await this.events.insertOne(document);
      return document;
    } catch (error) {
      if (isDuplicateKey(error)) return undefined;
      throw error;
    }
  }

  /** The stored events among `seqs` of the log, by seq; one `findOne` by `_id` each, in parallel. */
  async read(logId: string, seqs: number[]): Promise<Map<number, TaskEventDocument>> {
    const documents = await Promise.all(seqs.map((seq) => this.events.findOne({ _id: eventDocumentId(logId, seq) })));
    return new Map(documents.flatMap((document) => (document ? [[document.seq, document] as const] : [])));
  }
}
