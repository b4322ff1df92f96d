import { EventEmitter } from 'node:events';

/**
 * Tells the event feeds of this process that a log grew, when the writer that stored the event runs
 * in the same process (LogWriter). A writer elsewhere is not heard: feeds read the store too.
 */
export class LogChanges {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  /** An event was stored in the log `logId` (a task's or a composition's) by this process. */
  logged(logId: string): void {
    this.emitter.emit(logId);
  }

  /** Calls `listener` on every event logged in `logId` here, until the returned function is called. */
  onLogged(logId: string, listener: () => void): () => void {
    this.emitter.on(logId, listener);
    return () => this.emitter.off(logId, listener);
  }
}
