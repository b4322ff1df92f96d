import { nestsDeeperThan } from '../http/json-depth';
import { SchemaRejected, UserSchemaCompiler } from './user-schemas';

describe('UserSchemaCompiler', () => {
  const compiler = new UserSchemaCompiler();

  it('compiles a typical tool schema and applies defaults', () => {
    const validate = compiler.compile({
      type: 'object',
      properties: { text: { type: 'string', description: 'what to say' }, loud: { type: 'boolean', default: false }, at: { type: 'string', format: 'date-time' } },
      required: ['text'],
    });
    const params: Record<string, unknown> = { text: 'hi' };
    expect(validate(params)).toBe(true);
    expect(params).toEqual({ text: 'hi', loud: false });
    expect(validate({ text: 'hi', at: 'yesterday' })).toBe(false);
  });

  it.each([
    ['an unknown keyword', { type: 'object', frobnicate: true }, /unknown keyword/],
    ['a remote $ref', { $ref: 'https://example.com/schema.json' }, /can't resolve reference/],
    ['a wrong type name', { type: 'strin' }, /type must be/],
    ['a non-object', ['type', 'string'], /JSON object/],
    ['an $async schema', { $async: true, type: 'object' }, /must not be \$async/],
    ['deep nesting', JSON.parse(`${'{"not":'.repeat(40)}{}${'}'.repeat(40)}`), /nest at most/],
  ])('rejects %s', (_what, schema, message) => {
    expect(() => compiler.compile(schema as never)).toThrow(SchemaRejected);
    expect(() => compiler.compile(schema as never)).toThrow(message);
  });

  it('runs pattern and patternProperties as RE2', () => {
    const validate = compiler.compile({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^x-\\d+$': { type: 'number' } } });
    expect(validate({ s: 'aaa', 'x-1': 1 })).toBe(true);
    expect(validate({ s: 'aaab' })).toBe(false);
    expect(validate({ 'x-2': 'not a number' })).toBe(false);
    expect(() => compiler.compile({ type: 'string', pattern: '(a)\\1' })).toThrow(/invalid escape sequence/);
  });

  it('compiles a schema that refers to its own root', () => {
    const validate = compiler.compile({ type: 'object', properties: { child: { $ref: '#' } } });
    expect(validate({ child: { child: {} } })).toBe(true);
    expect(validate({ child: { child: 1 } })).toBe(false);
  });

  it('checks depth without recursion on absurdly deep input', () => {
    let deep: unknown = {};
    for (let level = 0; level < 200_000; level += 1) deep = { a: deep };
    expect(nestsDeeperThan(deep, 32)).toBe(true);
    expect(() => compiler.compile(deep as never)).toThrow(/nest at most/);
  });

  it('compiles a cached schema once per key', () => {
    const counting = new UserSchemaCompiler();
    const compile = jest.spyOn(counting, 'compile');
    const schema = { type: 'object' };
    counting.cached('agent@1:tools/x', schema);
    counting.cached('agent@1:tools/x', schema);
    expect(compile).toHaveBeenCalledTimes(1);
    counting.cached('agent@2:tools/x', schema);
    expect(compile).toHaveBeenCalledTimes(2);
  });
});
