import { RECENT_AGENT_MAX_AGE_MS } from '../registry/recent-agents';
import type { ChangeLog } from '../store/change-log';
import { LiveCopy } from '../store/live-copy';
import { RecordCache } from '../store/record-cache';

/** Everything known is forgotten this often whatever the log says, for a session end whose record failed. */
const KNOWN_SESSIONS_MAX_AGE_MS = 60_000;

/**
 * The sessions this process opened or read, in memory (a RecordCache: a budget of bytes, the least
 * recently used dropped first). A session never changes once opened, it only ends, and each end is
 * recorded in a ChangeLog after its delete. A lookup first catches up with the log as a task's
 * agent is served (a read of the log's number begun within RECENT_AGENT_MAX_AGE_MS, most often
 * another request's), which forgets the sessions ended since: a session ended through this process
 * is gone at once (`forget`), one ended through another within that bound. A session not in memory
 * is read from the store, and an id not found there is not remembered: a session opened anywhere
 * is usable at once. A read begun before a session was forgotten is not kept.
 */
export class KnownSessions<Session extends object> {
  private readonly sessions: RecordCache<Session>;
  private readonly copy: LiveCopy<void>;

  constructor(log: ChangeLog, read: (sessionId: string) => Promise<Session | null>) {
    this.sessions = new RecordCache(read);
    this.copy = new LiveCopy(
      log,
      {
        // The data is the cache itself: nothing to read whole, and starting over is forgetting it all.
        load: () => Promise.resolve(),
        install: () => this.sessions.clear(),
        refresh: (sessionIds) => Promise.resolve(sessionIds.forEach((sessionId) => this.forget(sessionId))),
      },
      KNOWN_SESSIONS_MAX_AGE_MS,
    );
  }

  /** The session `sessionId`, from memory or else from the store; undefined when it does not exist (or ended). */
  async find(sessionId: string): Promise<Session | undefined> {
    await this.copy.catchUp({ readWithinMs: RECENT_AGENT_MAX_AGE_MS });
    const [found] = await this.sessions.getMany([sessionId]);
    return found;
  }

  /** Keeps a session just opened. */
  remember(sessionId: string, session: Session): void {
    this.sessions.keep(sessionId, session);
  }

  /** Forgets a session that ended. */
  forget(sessionId: string): void {
    this.sessions.forget(sessionId);
  }
}
