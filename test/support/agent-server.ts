import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookSignature } from '../../src/agent-calls/webhook-signature';
import { useForFile } from './use-for-file';

/** A call the service made to a test agent. */
export interface ReceivedCall {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: any;
  receivedAt: number;
  /** The service closed the connection before the answer was sent. */
  abandoned?: boolean;
}

export interface AgentReply {
  status: number;
  /** Sent as JSON unless it is a string. */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Answer only once this settled (then after delayMs): the test decides when the answer comes, or that none does. */
  heldUntil?: Promise<unknown>;
  /** More response headers (a redirect's `location`, say). */
  headers?: Record<string, string>;
}

export type AgentBehaviour = (call: ReceivedCall) => AgentReply;

/**
 * A tiny agent on 127.0.0.1: each path behaves as the test registers it, and every call is kept so
 * tests can assert what the service sent.
 */
export class AgentServer {
  readonly calls: ReceivedCall[] = [];
  private readonly behaviours = new Map<string, AgentBehaviour>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<AgentServer> {
    const server = http.createServer();
    const agent = new AgentServer(server);
    server.on('request', (request, response) => agent.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return agent;
  }

  /** The URL of a new path that answers with `behaviour`. */
  route(name: string, behaviour: AgentBehaviour): string {
    this.behaviours.set(`/${name}`, behaviour);
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/${name}`;
  }

  callsTo(name: string): ReceivedCall[] {
    return this.calls.filter((call) => call.path === `/${name}`);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const call: ReceivedCall = {
        path: request.url ?? '/',
        headers: request.headers,
        rawBody,
        body,
        receivedAt: Date.now(),
      };
      this.calls.push(call);
      const behaviour = this.behaviours.get(call.path);
      const reply = behaviour ? behaviour(call) : { status: 404, body: 'no such test route' };
      response.once('close', () => {
        if (!response.headersSent) call.abandoned = true;
      });
      const answer = () => {
        if (call.abandoned) return;
        const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? null);
        response.writeHead(reply.status, {
          'content-type': typeof reply.body === 'string' ? 'text/plain' : 'application/json',
          ...reply.headers,
        });
        response.end(text);
      };
      const answerAfterDelay = () => setTimeout(answer, reply.delayMs ?? 0);
      if (reply.heldUntil) void reply.heldUntil.then(answerAfterDelay, answerAfterDelay);
      else answerAfterDelay();
    });
  }
}

/** A `heldUntil` that never settles: the agent is still answering when the test ends. */
export const forever: Promise<never> = new Promise(() => undefined);

/** 202: the agent took the task and reports its outcome later. */
export const accepts: AgentBehaviour = () => ({ status: 202, body: { status: 'received' } });

/** `accepts` a task, and answers a cancellation notice with 200. */
export const acceptsAndHearsCancel: AgentBehaviour = (received) =>
  (received.body as { cancel?: unknown } | undefined)?.cancel ? { status: 200, body: {} } : accepts(received);

/** Completed with `result`. */
export const completes =
  (result: unknown): AgentBehaviour =>
  () => ({ status: 200, body: { status: 'completed', result } });

/** The `webhook-signature` a call signed with `secret` carries (Standard Webhooks), to compare with the one it came with. */
export function signatureWith(secret: string, received: ReceivedCall): string {
  return webhookSignature(
    secret,
    received.headers['webhook-id'] as string,
    Number(received.headers['webhook-timestamp']),
    received.rawBody,
  );
}

/** An agent server for the file's tests: started before them, closed after. Call the returned function inside tests. */
export function useAgentServer(): () => AgentServer {
  return useForFile(
    'useAgentServer: the server',
    () => AgentServer.start(),
    (server) => server.close(),
  );
}
