// An example agent for the agent coordination service, with nothing but Node's standard library.
// It verifies the signature of every call, answers `tools/echo` at once, or, when the params ask for
// `laterMs`, answers 202 and reports the outcome later with POST /tasks/{taskId}/result. It stops
// a task it is told is cancelled.
//
// Run it:   ACS_URL=http://127.0.0.1:3000 AGENT_API_KEY=… AGENT_SIGNING_SECRET=whsec_… PORT=4000 npx tsx examples/echo-agent.ts
// after registering an agent whose mcpUrl is http://127.0.0.1:4000/mcp (registration returns the key and secret).
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

export interface EchoAgentOptions {
  port: number;
  /** Base URL of the coordination service, for the reports. */
  serviceUrl: string;
  /** The agent's API key (X-Api-Key), returned once by the registration. */
  apiKey: string;
  /** The agent's `whsec_…` signingSecret, returned once by the registration. */
  signingSecret: string;
}

/** Calls older or newer than this are refused: a replayed call cannot be re-sent later. */
const TOLERANCE_SECONDS = 5 * 60;

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the secret's base64-decoded bytes. */
export function verifySignature(
  secret: string,
  headers: http.IncomingHttpHeaders,
  body: string,
  nowSeconds = Date.now() / 1000,
): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64'));
  // The header may list several signatures (secret rotation), separated by spaces.
  return signatures.split(' ').some((signature) => {
    const candidate = Buffer.from(signature.replace(/^v1,/, ''));
    return signature.startsWith('v1,') && candidate.length === expected.length && timingSafeEqual(candidate, expected);
  });
}

/**
 * A report on a task (POST /tasks/{taskId}/result) with the agent's key, tried again on network
 * trouble and 5xx. A report may be sent again safely: the same report answers 200 every time.
 */
export async function report(
  service: Pick<EchoAgentOptions, 'serviceUrl' | 'apiKey'>,
  taskId: string,
  body: unknown,
): Promise<void> {
  for (let attempt = 1; attempt <= 5; attempt += 1) {
    const reply = await fetch(`${service.serviceUrl}/tasks/${taskId}/result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
      body: JSON.stringify(body),
    }).catch(() => undefined);
    if (reply && reply.status < 500) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
  }
}

export function startEchoAgent(options: EchoAgentOptions): Promise<http.Server> {
  // Tasks answered 202 whose report is still to come, so a cancellation can stop them.
  const pending = new Map<string, NodeJS.Timeout>();

  return serveSignedCalls(options.port, options.signingSecret, (body, answer) => {
    const call = body as {
      taskId: string;
      cancel?: boolean;
      operation?: string;
      params?: { text?: string; laterMs?: number };
    };

    if (call.cancel) {
      clearTimeout(pending.get(call.taskId));
      pending.delete(call.taskId);
      return answer(200, { taskId: call.taskId, cancelled: true });
    }
    if (call.operation !== 'tools/echo')
      return answer(200, {
        status: 'failed',
        error: { code: 'UNKNOWN_OPERATION', message: `No ${call.operation} here` },
      });
    const text = call.params?.text ?? '';
    const laterMs = call.params?.laterMs;
    // Quick work: answer with the result in the reply (well within AGENT_CALL_TIMEOUT_MS).
    if (laterMs === undefined) return answer(200, { status: 'completed', result: { text } });
    // Long work: accept now, report later. A retried call (same taskId) must not start the work twice.
    if (!pending.has(call.taskId)) {
      pending.set(
        call.taskId,
        setTimeout(() => {
          pending.delete(call.taskId);
          void report(options, call.taskId, { status: 'completed', result: { text, after: laterMs } });
        }, laterMs),
      );
    }
    return answer(202, { status: 'received' });
  });
}

/** Replies to a call with a status and a JSON body. */
export type Answer = (status: number, json: unknown) => void;

/**
 * An agent's HTTP server on 127.0.0.1:`port`: every request's signature is checked first (401 when
 * the service did not sign it with `signingSecret`), then its JSON body goes to `handle`.
 */
export function serveSignedCalls(
  port: number,
  signingSecret: string,
  handle: (call: unknown, answer: Answer) => void,
): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer: Answer = (status, json) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(json));
      };
      if (!verifySignature(signingSecret, request.headers, body)) return answer(401, { error: 'bad signature' });
      handle(JSON.parse(body) as unknown, answer);
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

if (require.main === module) {
  const required = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is required`);
    return value;
  };
  void startEchoAgent({
    port: Number(process.env.PORT ?? 4000),
    serviceUrl: required('ACS_URL'),
    apiKey: required('AGENT_API_KEY'),
    signingSecret: required('AGENT_SIGNING_SECRET'),
  }).then(() => console.log(`echo agent listening on http://127.0.0.1:${process.env.PORT ?? 4000}/mcp`));
}
