import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One HTTP request the server got: its method, JSON-RPC method and `Last-Event-ID`. */
export interface SeenRequest {
  httpMethod: string;
  rpcMethod?: string;
  sessionId?: string;
  lastEventId?: string;
}

export interface ResumableServerOptions {
  /** The `retry` (ms) the server asks for before a stream is resumed. */
  retryMs: number;
  /** Whether a resumed stream carries the answer (true) or is closed again, empty, like the first. */
  answerOnResume: boolean;
}

/**
 * An MCP server written by hand, as SEP-1699 lets a server behave: it answers `tools/call` with an
 * SSE stream that sends an event id and `retry`, then closes before the answer; the answer comes on
 * the stream a GET with `Last-Event-ID` resumes. Without `Last-Event-ID` a GET gets 405 (no
 * stream of the session's own). Every request is kept, so a test sees what the client did.
 */
export class ResumableMcpServer {
  readonly requests: SeenRequest[] = [];
  private readonly pending = new Map<string, unknown>();
  private events = 0;

  private readonly server = http.createServer((request, response) => void this.handle(request, response));

  private constructor(private readonly options: ResumableServerOptions) {}

  static async start(options: ResumableServerOptions): Promise<ResumableMcpServer> {
    const mcp = new ResumableMcpServer(options);
    await new Promise<void>((resolve) => mcp.server.listen(0, '127.0.0.1', resolve));
    return mcp;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
  }

  /** The GETs that resumed a stream. */
  get resumptions(): SeenRequest[] {
    return this.requests.filter((request) => request.httpMethod === 'GET' && request.lastEventId !== undefined);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const message = (text === '' ? {} : JSON.parse(text)) as { id?: string | number; method?: string };
    const lastEventId = request.headers['last-event-id'] as string | undefined;
    const sessionId = request.headers['mcp-session-id'] as string | undefined;
    this.requests.push({ httpMethod: request.method ?? '', rpcMethod: message.method, sessionId, lastEventId });
    const headers = { 'mcp-session-id': 'resumable-session' };
    if (request.method === 'DELETE') return void response.writeHead(200, headers).end();
    if (request.method === 'GET') {
      if (lastEventId === undefined) return void response.writeHead(405).end();
      return this.resume(lastEventId, response);
    }
    if (message.id === undefined) return void response.writeHead(202, headers).end();
    if (message.method === 'tools/call') {
      const eventId = this.nextEventId();
      this.pending.set(eventId, {
        jsonrpc: '2.0',
        id: message.id,
        result: { content: [{ type: 'text', text: 'resumed' }] },
      });
      response.writeHead(200, { ...headers, 'content-type': 'text/event-stream' });
      return void response.end(`id: ${eventId}\nretry: ${this.options.retryMs}\ndata: \n\n`);
    }
    const result =
      message.method === 'initialize'
        ? {
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 'resumable', version: '1' },
          }
        : {};
    response.writeHead(200, { ...headers, 'content-type': 'application/json' });
    response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  }

  /** Sends the answer the stream `lastEventId` left pending, or closes the stream again without it. */
  private resume(lastEventId: string, response: http.ServerResponse): void {
    const answer = this.pending.get(lastEventId);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const eventId = this.nextEventId();
    if (answer === undefined || !this.options.answerOnResume) {
      if (answer !== undefined) this.pending.set(eventId, answer);
      return void response.end(`id: ${eventId}\nretry: ${this.options.retryMs}\ndata: \n\n`);
    }
    this.pending.delete(lastEventId);
    response.end(`id: ${eventId}\nevent: message\ndata: ${JSON.stringify(answer)}\n\n`);
  }

  private nextEventId(): string {
    this.events += 1;
    return `event-${this.events}`;
  }
}
