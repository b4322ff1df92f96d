import { credentialHeaders, currentCredentials } from './session';

/** How long to wait before reconnecting a stream that broke. */
const RECONNECT_MS = 1_000;

/**
 * Follows a Server-Sent Events stream of the API (a task's or a composition's events) with the
 * signed-in credentials in headers, which EventSource cannot send. A stream that breaks is opened
 * again with `Last-Event-ID`, so events come on with no gap and no repeat; it stops when `done()`
 * says so (after the last event, with which the server ends it too), or when aborted.
 */
export function followEvents(
  path: string,
  onEvent: (data: unknown) => void,
  done: () => boolean,
  onError: (message: string) => void,
): AbortController {
  const abort = new AbortController();
  let lastEventId: string | undefined;
  const run = async (): Promise<void> => {
    while (!abort.signal.aborted && !done()) {
      try {
        const credentials = currentCredentials();
        const response = await fetch(path, {
          headers: {
            Accept: 'text/event-stream',
            ...(credentials ? credentialHeaders(credentials) : {}),
            ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
          },
          signal: abort.signal,
        });
        if (!response.ok || !response.body) {
          onError(`${path} answered ${response.status}`);
          return;
        }
        for await (const event of serverSentEvents(response.body)) {
          if (event.id !== undefined) lastEventId = event.id;
          if (event.data !== undefined) onEvent(JSON.parse(event.data));
          if (done()) return abort.abort();
        }
        // Ended before the last event: the connection broke, or a proxy cut it.
      } catch {
        if (abort.signal.aborted) return;
      }
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
    }
  };
  void run();
  return abort;
}

/** The events of a `text/event-stream` body: `id:` and `data:` lines, each event ended by a blank line. */
async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id?: string; data?: string }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let event: { id?: string; data?: string } = {};
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).replace(/\r$/, '');
      buffered = buffered.slice(newline + 1);
      if (line === '') {
        if (event.data !== undefined || event.id !== undefined) yield event;
        event = {};
      } else if (line.startsWith('id:')) event.id = line.slice(3).trim();
      else if (line.startsWith('data:'))
        event.data = event.data === undefined ? line.slice(5).trim() : `${event.data}\n${line.slice(5).trim()}`;
    }
  }
}
