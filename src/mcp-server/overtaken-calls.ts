import type { McpCall, McpSessions } from './server-sessions';

/**
 * The waits, in ms, of a look for a call's record that found none before it looks again: the
 * record is written once the task started, and a client's cancellation, or its resumption of a
 * stream cut right after the stream's first event, may overtake it, on this process or another. A
 * request id that started no task (a `tools/list`) is looked for this long in vain.
 */
export const OVERTAKEN_CALL_WAITS_MS = [100, 200, 400, 800, 1_600];

/** Call `requestId` of the session once its record is there, if it comes within the waits. */
export async function recordedCall(
  sessions: Pick<McpSessions, 'callOf'>,
  sessionId: string,
  requestId: string | number,
): Promise<McpCall | undefined> {
  for (const waitMs of OVERTAKEN_CALL_WAITS_MS) {
    // Keeps no process alive: a call still looked for at shutdown is given up.
    await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
    const made = await sessions.callOf(sessionId, requestId);
    if (made) return made;
  }
  return undefined;
}
