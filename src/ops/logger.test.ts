import { Writable } from 'node:stream';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createLogger } from './logger';

/** A destination that keeps what the logger writes, as a terminal or as a pipe. */
function capture(isTTY: boolean): { stream: Writable & { isTTY: boolean }; text: () => string } {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString());
        done();
      },
    }),
    { isTTY },
  );
  return { stream, text: () => chunks.join('') };
}

describe('createLogger', () => {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  beforeAll(() => context.setGlobalContextManager(contextManager));
  afterAll(() => context.disable());

  const span = trace.wrapSpanContext({
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: 1,
  });

  it("writes JSON lines, with the active span's traceId and spanId, and none outside a span", () => {
    const { stream, text } = capture(false);
    const logger = createLogger({ logLevel: 'info' }, stream);
    context.with(trace.setSpan(context.active(), span), () => logger.info({ taskId: 't1' }, 'inside'));
    logger.info('outside');
    const [inside, outside] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(inside).toMatchObject({
      msg: 'inside',
      taskId: 't1',
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
    });
    expect(outside.msg).toBe('outside');
    expect(outside).not.toHaveProperty('traceId');
  });

  it('writes readable lines, not JSON, to a terminal', () => {
    const { stream, text } = capture(true);
    createLogger({ logLevel: 'info' }, stream).info({ taskId: 't2' }, 'readable');
    const line = text();
    expect(line).toContain('readable');
    expect(line).toContain('taskId: "t2"');
    expect(() => JSON.parse(line) as unknown).toThrow();
  });

  it("redacts task tokens, header values, keys and URLs' credentials", () => {
    const { stream, text } = capture(false);
    createLogger({ logLevel: 'info' }, stream).warn(
      {
        taskToken: 'CiQ3ZmE0token',
        activity: { taskToken: 'CiQ3ZmE0nested' },
        agent: { headers: { Authorization: 'Bearer planted-1', 'X-Custom': 'planted-2' }, apiKey: 'planted-3' },
        headers: { cookie: 'planted-4' },
        url: 'https://user:planted-5@host.example/hook',
      },
      'Calling https://user:planted-6@host.example/mcp failed',
    );
    const line = text();
    expect(line).not.toMatch(/CiQ3ZmE0|planted-/);
    expect(JSON.parse(line)).toMatchObject({
      taskToken: '[redacted]',
      agent: { headers: { Authorization: '[redacted]', 'X-Custom': '[redacted]' }, apiKey: '[redacted]' },
      url: 'https://[redacted]@host.example/hook',
      msg: 'Calling https://[redacted]@host.example/mcp failed',
    });
  });
});
