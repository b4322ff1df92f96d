import { CheckPool } from './check-pool';
import { SchemaRejected } from './compiler';
import { CheckTooCostly } from './schema-checks';

/** An enum of objects: each item of the data is compared with every member. */
const costly = {
  type: 'array',
  items: { enum: Array.from({ length: 5_000 }, (_, index) => ({ k: index })) },
};
const costlyData = Array.from({ length: 80_000 }, () => ({ k: 4_999 }));

describe('CheckPool', () => {
  const pool = new CheckPool({ threads: 1, timeoutMs: 2_000 });
  afterAll(() => pool.close());

  it('checks data on its thread and gives it back with the defaults filled in', async () => {
    const schema = { type: 'object', properties: { loud: { type: 'boolean', default: false } }, required: ['text'] };
    await expect(pool.check('say', schema, { text: 'hi' })).resolves.toEqual({
      valid: true,
      data: { text: 'hi', loud: false },
    });
    const failed = await pool.check('say', schema, {});
    expect(failed).toMatchObject({
      valid: false,
      errors: [{ keyword: 'required', params: { missingProperty: 'text' } }],
    });
  });

  it('refuses a schema that does not compile, saying why and where', async () => {
    await expect(pool.compile({ type: 'strin' })).rejects.toThrow(SchemaRejected);
    const many = {
      type: 'object',
      properties: { a: { allOf: Array.from({ length: 40 }, () => ({ type: 'object' })) } },
    };
    await expect(pool.compile(many)).rejects.toMatchObject({ name: 'SchemaRejected', pointer: '/properties/a' });
  });

  it('cuts off a check past its deadline, and the next check runs on a new thread', async () => {
    const cutOff = await pool.check('costly', costly, costlyData).catch((error: unknown) => error);
    expect(cutOff).toBeInstanceOf(CheckTooCostly);
    expect((cutOff as Error).message).toMatch(/ran longer than 2000 ms/);
    await expect(pool.check('small', { type: 'integer' }, 3)).resolves.toEqual({ valid: true, data: 3 });
  });

  it('refuses a schema whose compilation runs past the deadline', async () => {
    const quick = new CheckPool({ threads: 1, timeoutMs: 1_000 });
    try {
      await quick.check('small', { type: 'integer' }, 0);
      // Ajv takes seconds to compile a schema of 2 500 members (about 60 KiB): several times the deadline.
      const properties = Object.fromEntries(
        Array.from({ length: 2_500 }, (_, index) => [`p${index}`, { type: 'string' }]),
      );
      await expect(quick.compile({ type: 'object', properties })).rejects.toMatchObject({
        name: 'SchemaRejected',
        message: 'compiling this schema was cut off: it ran longer than 1000 ms',
      });
    } finally {
      await quick.close();
    }
  });

  it('refuses checks with 503 when too many wait for a thread', async () => {
    const small = new CheckPool({ threads: 1, timeoutMs: 2_000, maxWaiting: 1 });
    try {
      await small.check('small', { type: 'integer' }, 0);
      const running = small.check('costly', costly, costlyData).catch((error: unknown) => error);
      const waiting = small.check('small', { type: 'integer' }, 1);
      await expect(small.check('small', { type: 'integer' }, 2)).rejects.toMatchObject({
        status: 503,
        reason: 'schema_checks_busy',
        headers: { 'Retry-After': '1' },
      });
      await expect(running).resolves.toBeInstanceOf(CheckTooCostly);
      await expect(waiting).resolves.toEqual({ valid: true, data: 1 });
    } finally {
      await small.close();
    }
  });

  it('refuses what is asked after close', async () => {
    const closing = new CheckPool({ threads: 1, timeoutMs: 1_000 });
    await closing.close();
    await expect(closing.compile({ type: 'object' })).rejects.toMatchObject({ status: 503 });
  });
});
