import type { Context } from 'koa';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, ErrorCode } from '../http/errors';
import { SseStream } from '../task-events/sse';
import { eventIdOf, type CallCursor } from './call-event-ids';
import { recordedCall } from './overtaken-calls';
import type { McpSession, McpSessions } from './server-sessions';
import { followTask, type ToolCallDeps } from './tool-calls';

export interface ResumptionDeps extends Pick<ToolCallDeps, 'feeds'> {
  sessions: Pick<McpSessions, 'callOf'>;
}

/**
 * A `tools/call` stream resumed with `Last-Event-ID` (SEP-1699), after the client lost it (a
 * restart of the process that held it, a proxy that cut it): the call's task is followed again from
 * its event log, from the event the client saw last, and the stream ends with the call's answer.
 * The session and the call are the store's, so any process resumes any stream.
 */
export async function resumeCall(
  ctx: Context,
  deps: ResumptionDeps,
  session: McpSession,
  cursor: CallCursor,
): Promise<void> {
  const { principal } = session;
  // A stream cut after its first event only (seq 0) may come back before its call's record; one cut
  // later cannot: nothing after that event goes out before the record (tool-calls.ts).
  const made =
    (await deps.sessions.callOf(cursor.sessionId, cursor.requestId)) ??
    (cursor.seq === 0 ? await recordedCall(deps.sessions, cursor.sessionId, cursor.requestId) : undefined);
  if (!made) throw new ApiError(ErrorCode.NOT_FOUND, 'No call of a session of the caller has this Last-Event-ID');
  const left = new AbortController();
  const stream = new SseStream(ctx, () => left.abort());
  let seq = cursor.seq;
  const send = (message: JSONRPCMessage) => stream.send(eventIdOf({ ...cursor, seq }), message);
  const result = await followTask(
    deps,
    made.taskId,
    {
      principal,
      session,
      requestId: cursor.requestId,
      progressToken: made.progressToken,
      signal: left.signal,
      notify: (notification) => Promise.resolve(send({ jsonrpc: '2.0', ...notification })),
      ask: (request) => Promise.resolve(send(request)),
      at: (next) => (seq = next),
    },
    { after: cursor.seq },
  );
  send({ jsonrpc: '2.0', id: cursor.requestId, result });
  stream.end();
}
