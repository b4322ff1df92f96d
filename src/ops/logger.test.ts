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
});
