import { EventEmitter } from 'node:events';
import type { TaskEvent } from './task-event';

/**
 * Tells the event feeds of this process that a log grew, and with what, when the writer that stored
 * the event runs in the same process (LogWriter): a feed then need not read it back. A writer
 * elsewhere is not heard: feeds read the store too.
 */
export class LogChanges {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  /**
   * An event was stored in the log `logId` (a task's or a composition's) by this process: `readAs`
   * gives it as a reader of the log reads it, when the writer knows it whole. It runs only when a
   * feed follows the log: a log no one follows costs its writer nothing more.
   */
  logged(logId: string, readAs?: () => TaskEvent | undefined): void {
    if (this.emitter.listenerCount(logId) > 0) this.emitter.emit(logId, readAs?.());
  }

  /** Calls `listener` on every event logged in `logId` here, until the returned function is called. */
  onLogged(logId: string, listener: (event: TaskEvent | undefined) => void): () => void {
    this.emitter.on(logId, listener);
    return () => this.emitter.off(logId, listener);
  }
}
