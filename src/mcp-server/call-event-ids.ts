import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

/** Where a stream of a `tools/call` stands: the session, the request, and the task log's seq. */
export interface CallCursor {
  sessionId: string;
  requestId: string | number;
  seq: number;
}

/** A stream's event id: `{sessionId}.{requestId as base64url JSON}.{seq}`; the session id is base64url, without dots. */
export function eventIdOf({ sessionId, requestId, seq }: CallCursor): string {
  return `${sessionId}.${Buffer.from(JSON.stringify(requestId)).toString('base64url')}.${seq}`;
}

/** The cursor an event id of ours names; undefined for any other text. */
export function cursorOf(eventId: string): CallCursor | undefined {
  const [sessionId, request, seq, ...rest] = eventId.split('.');
  if (!sessionId || !request || rest.length > 0 || !/^\d{1,15}$/.test(seq ?? '')) return undefined;
  try {
    const requestId = JSON.parse(Buffer.from(request, 'base64url').toString('utf8')) as unknown;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return undefined;
    return { sessionId, requestId, seq: Number(seq) };
  } catch {
    return undefined;
  }
}

/**
 * The event ids of one `tools/call`'s stream, as the SDK's transport asks for them. Nothing is
 * stored: an id names the call and how far into its task's event log the stream had come, and a
 * client that resumes with it (GET with `Last-Event-ID`, stream-resumption.ts) is served from the
 * log itself, by whichever process it reaches. The call moves `seq` on as it sends each event.
 */
export class CallEventIds implements EventStore {
  seq = 0;

  constructor(
    private readonly sessionId: string,
    private readonly requestId: string | number,
  ) {}

  storeEvent(): Promise<string> {
    return Promise.resolve(eventIdOf({ sessionId: this.sessionId, requestId: this.requestId, seq: this.seq }));
  }

  /** Never asked: a resumption is answered before the SDK's transport sees it. */
  replayEventsAfter(): Promise<string> {
    return Promise.reject(new Error('A resumption is served from the task log (stream-resumption.ts)'));
  }
}
