import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { outboundDispatcher } from '../../src/tasks/outbound-guard';
import { signWebhook } from '../../src/tasks/webhook-signature';

/** A trivial agent on loopback: answers every task at once with a small completed result, noting when each taskId arrived. */
export async function startTrivialAgent(): Promise<{
  url: string;
  receivedAt: Map<string, number>;
  close(): Promise<void>;
}> {
  const receivedAt = new Map<string, number>();
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      receivedAt.set((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { taskId: string }).taskId, Date.now());
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ status: 'completed', result: { ok: true } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    receivedAt,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The same signed POST the router's callAgent activity sends, without the router around it. */
export function directCaller(url: string, signingSecret: string) {
  const dispatcher = outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000 });
  return async function callAgentOnce(taskId: string): Promise<unknown> {
    const body = JSON.stringify({ taskId, operation: 'tools/echo', params: { text: 'bench' } });
    const reply = await request(url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', ...signWebhook(signingSecret, `${taskId}-1`, body) },
      body,
    });
    const answer = (await reply.body.json()) as { status: string };
    if (answer.status !== 'completed') throw new Error(`agent answered ${reply.statusCode}`);
    return answer;
  };
}

export type BareActivities = { callAgentOnce: ReturnType<typeof directCaller> };
