import { ResumableMcpServer } from '../../test/support/resumable-mcp-server';
import { callOverMcp, type McpCallOptions } from './mcp-call';
import { McpSessionPool } from './mcp-session-pool';
import { outboundDispatcher } from './outbound-guard';
import { MAX_STREAM_RESUMPTIONS } from './stream-resumptions';

describe('MCP calls whose SSE stream the server closes before the answer (SEP-1699)', () => {
  let server: ResumableMcpServer;
  afterEach(() => server.close());

  const dispatcher = outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000 });
  const options = (timeoutMs: number): McpCallOptions => ({
    dispatcher,
    timeoutMs,
    maxReplyBytes: 1024 * 1024,
    onProgress: () => undefined,
  });
  const agent = () => ({ id: 'resumable', version: 1, endpointUrl: server.url });
  const tool = { category: 'tools', entry: { name: 'slow' } };

  it.each([
    ['in a session of its own', () => undefined],
    [
      'in a kept session',
      () => new McpSessionPool({ dispatcher, timeoutMs: 60_000, maxReplyBytes: 1024 * 1024, idleMs: 60_000 }),
    ],
  ])('resumes the stream with Last-Event-ID and gets the answer once, %s', async (_how, pool) => {
    server = await ResumableMcpServer.start({ retryMs: 20, answerOnResume: true });
    const verdict = await callOverMcp(agent(), tool, {}, { ...options(60_000), sessions: pool() });
    expect(verdict).toEqual({ kind: 'completed', result: { content: [{ type: 'text', text: 'resumed' }] } });
    expect(server.requests.filter((request) => request.rpcMethod === 'tools/call')).toHaveLength(1);
    expect(server.resumptions).toEqual([
      expect.objectContaining({ lastEventId: 'event-1', sessionId: 'resumable-session' }),
    ]);
  });

  it('resumes a stream the server keeps closing a bounded number of times, then lets the call time out', async () => {
    server = await ResumableMcpServer.start({ retryMs: 0, answerOnResume: false });
    const verdict = await callOverMcp(agent(), tool, {}, options(2_000));
    expect(verdict).toMatchObject({ kind: 'retry' });
    expect(server.resumptions.length).toBeGreaterThan(0);
    expect(server.resumptions.length).toBeLessThanOrEqual(MAX_STREAM_RESUMPTIONS);
  });
});
