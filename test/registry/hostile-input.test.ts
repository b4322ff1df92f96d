import { agentRegistration, registerAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { startTask } from '../support/tasks';
import { call, expectError, type Reply } from '../support/http';

/**
 * Input meant to hurt: every case gets a 4xx with the contract's error body, and the service stays
 * up. Nothing here may produce a 500 or a hang.
 */
const database = useTestDatabase();
const LONG = 'x'.repeat(100_000);
const tool = (extra: Record<string, unknown>) => ({
  name: 'hostile',
  description: 'd',
  inputSchema: { type: 'object' },
  ...extra,
});
const withTools = (...tools: unknown[]) => agentRegistration({ capabilities: { tools } });
/** A tool's inputSchema (an object, as MCP requires) whose one property `s` has `schema`. */
const withProperty = (schema: object) => ({ type: 'object', properties: { s: schema } });
const nestedText = (depth: number) => `${'{"not":'.repeat(depth)}{}${'}'.repeat(depth)}`;
/** A registration whose one tool has `member` nested `depth` deep, as raw JSON: too deep for JSON.stringify here. */
const deeplyNested = (member: 'inputSchema' | 'annotations', depth: number) => {
  const marker = '"__DEEP__"';
  const value = member === 'inputSchema' ? nestedText(depth) : `{"outputSchema":${nestedText(depth)}}`;
  return JSON.stringify(withTools(tool({ [member]: '__DEEP__' }))).replace(marker, value);
};

/** An agent whose one tool, "hostile", has `inputSchema` stored as a version before today's rules would have. */
async function storedBeforeTheRules(inputSchema: unknown): Promise<string> {
  const agent = await registerAgent({ capabilities: { tools: [tool({})] } });
  await database()
    .collection('agents')
    .updateOne(
      { _id: agent.agentId as never },
      { $set: { capabilities: JSON.stringify({ tools: [tool({ inputSchema })] }) } },
    );
  return agent.agentId;
}

/** POST /tasks for `tools/hostile` must be refused with a message containing or matching `message`, and start nothing. */
async function expectTaskRefused(agentId: string, params: unknown, message: string | RegExp): Promise<void> {
  const reply = await call('POST', '/tasks', {
    apiKey: 'admin',
    body: { agentId, operation: 'tools/hostile', params },
  });
  expect({ status: reply.status, code: reply.body.error?.code, message: reply.body.error?.message }).toEqual({
    status: 400,
    code: 'VALIDATION_ERROR',
    message: typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
  });
  expect(await database().collection('tasks').countDocuments({ agentId })).toBe(0);
}

function expectRefused(reply: Reply, status: number): void {
  expect({ status: reply.status, code: typeof reply.body?.error?.code }).toEqual({ status, code: 'string' });
}

describe('hostile registrations', () => {
  it.each([
    ['a 100k-character name', agentRegistration({ name: LONG })],
    ['a 100k-character description', agentRegistration({ description: LONG })],
    ['a 100k-character defaultPrompt', agentRegistration({ defaultPrompt: LONG })],
    ['a 100k-character URL', agentRegistration({ mcpUrl: `http://127.0.0.1/${LONG}` })],
    ['a URL without a host', agentRegistration({ callbackUrl: 'http://' })],
    ['a URL with an empty host', agentRegistration({ mcpUrl: 'http:///mcp' })],
    ['a 100k-character tool name', withTools(tool({ name: LONG }))],
    ['a 100k-character tool description', withTools(tool({ description: LONG }))],
    ['a 100k-character sharedWith id', agentRegistration({ sharedWith: [LONG] })],
    ['capabilities as a string', agentRegistration({ capabilities: 'tools' })],
    ['tools as null', agentRegistration({ capabilities: { tools: null } })],
    ['a tool that is a number', withTools(7)],
    ['sharedWith of numbers', agentRegistration({ sharedWith: [1, 2] })],
    ['an operator object for a name', agentRegistration({ name: { $gt: '' } })],
    ['a boolean visibility', agentRegistration({ visibility: true })],
    ['a body that is a string', 'agent'],
    ['a body that is null', null],
    ['300 tools', withTools(...Array.from({ length: 300 }, (_, index) => tool({ name: `t${index}` })))],
    ['20 000 tools that are numbers', withTools(...Array.from({ length: 20_000 }, (_, index) => index))],
    [
      '100 000 sharedWith ids',
      agentRegistration({ sharedWith: Array.from({ length: 100_000 }, (_, index) => `u${index}`) }),
    ],
    [
      'a schema with a remote $ref',
      withTools(tool({ inputSchema: { type: 'object', $ref: 'http://169.254.169.254/latest/meta-data' } })),
    ],
    [
      'a schema with a file $ref',
      withTools(tool({ inputSchema: { type: 'object', properties: { a: { $ref: 'file:///etc/passwd' } } } })),
    ],
    [
      'a schema with $id and a relative remote $ref',
      withTools(tool({ inputSchema: { $id: 'https://example.com/a.json', type: 'object', $ref: 'b.json' } })),
    ],
    ['a schema nested 40 deep', withTools(tool({ inputSchema: { type: 'object', ...JSON.parse(nestedText(40)) } }))],
    ['a schema over 64 KiB', withTools(tool({ inputSchema: { type: 'object', description: 'y'.repeat(70_000) } }))],
    [
      'a schema with an invalid regular expression',
      withTools(tool({ inputSchema: withProperty({ type: 'string', pattern: '(' }) })),
    ],
    [
      'a schema with an unknown format',
      withTools(tool({ inputSchema: withProperty({ type: 'string', format: 'shoe-size' }) })),
    ],
    ['a schema whose type is an object', withTools(tool({ inputSchema: { type: { $gt: '' } } }))],
    [
      'an $async schema, whose validator would answer with a promise',
      withTools(tool({ inputSchema: { $async: true, type: 'object' } })),
    ],
    [
      'a schema of a meta-schema of its own',
      withTools(tool({ inputSchema: { $schema: 'https://example.com/my-meta', type: 'object' } })),
    ],
    [
      'a schema of draft 2019-09, neither 2020-12 nor draft-07',
      withTools(tool({ inputSchema: { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object' } })),
    ],
    [
      'a $dynamicRef, whose target the cost bound cannot follow',
      withTools(
        tool({ inputSchema: { $dynamicAnchor: 'n', type: 'object', properties: { a: { $dynamicRef: '#n' } } } }),
      ),
    ],
  ])('answers 400 to %s', async (_what, body) => {
    expectRefused(await call('POST', '/agents', { apiKey: 'admin', body }), 400);
  });

  it.each([
    ['an inputSchema', 'inputSchema' as const],
    ['an outputSchema', 'annotations' as const],
  ])('answers 400 to %s nested 50 000 deep', async (_what, member) => {
    const rawBody = deeplyNested(member, 50_000);
    expectRefused(
      await call('POST', '/agents', { apiKey: 'admin', rawBody, headers: { 'content-type': 'application/json' } }),
      400,
    );
  });

  it('checks params against a catastrophic pattern in linear time, and refuses lookarounds', async () => {
    const inputSchema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    const agent = await registerAgent({
      capabilities: { tools: [{ name: 'backtrack', description: 'd', inputSchema }] },
    });
    // Backtracking would never end: JavaScript's RegExp takes about 10 s at 30 characters, doubling
    // with each further one, so 50 would take months.
    const params = { s: `${'a'.repeat(50)}b` };
    const reply = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { agentId: agent.agentId, operation: 'tools/backtrack', params },
    });
    expectRefused(reply, 400);
    expect(reply.body.error.message).toMatch(/must match pattern/);

    const lookahead = withTools(tool({ inputSchema: withProperty({ type: 'string', pattern: '^(?=a)' }) }));
    const refused = await call('POST', '/agents', { apiKey: 'admin', body: lookahead });
    expect({ status: refused.status, message: refused.body.error.message }).toEqual({
      status: 400,
      message: expect.stringMatching(/unsupported Perl syntax/),
    });
  });

  describe('uniqueItems over objects, which Ajv compared pair by pair', () => {
    const inputSchema = {
      type: 'object',
      properties: { list: { type: 'array', items: { type: 'object' }, uniqueItems: true } },
    };

    it('takes a task with 80 000 such items at once, and names two equal ones (40 000 held the event loop for 51 s)', async () => {
      const agent = await registerAgent({ capabilities: { tools: [tool({ inputSchema })] } });
      const list = Array.from({ length: 80_000 }, (_, i) => ({ i }));
      await startTask({ agentId: agent.agentId, operation: 'tools/hostile', params: { list } });
      const refused = await call('POST', '/tasks', {
        apiKey: 'admin',
        body: { agentId: agent.agentId, operation: 'tools/hostile', params: { list: [...list, { i: 0 }] } },
      });
      expect({ status: refused.status, details: refused.body.error?.details }).toEqual({
        status: 400,
        details: [{ path: '/list', message: 'must NOT have duplicate items (items ## 0 and 80000 are identical)' }],
      });
    });
  });

  describe('schemas that apply schemas again and again to one value', () => {
    const nested = (depth: number): unknown => (depth === 0 ? [] : [nested(depth - 1)]);
    // Each level of `tree` applies `t` twice to the level below: 2^depth checks, and params may nest 100 deep.
    const doubling = {
      type: 'object',
      properties: { tree: { $ref: '#/definitions/t' } },
      definitions: {
        t: { type: 'array', allOf: [{ items: { $ref: '#/definitions/t' } }, { items: { $ref: '#/definitions/t' } }] },
      },
    };
    // The first item of each level gets `t` from prefixItems, and again from the unevaluatedItems of
    // the allOf branch, which does not see its parent's prefixItems.
    const unevaluatedDoubling = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { tree: { $ref: '#t' } },
      $defs: {
        t: {
          $anchor: 't',
          type: 'array',
          prefixItems: [{ $ref: '#t' }],
          allOf: [{ unevaluatedItems: { $ref: '#t' } }],
        },
      },
    };
    // On params without `a`, Ajv applies the schema to them again, until the stack overflows.
    const looping = { type: 'object', anyOf: [{ required: ['a'] }, { $ref: '#' }] };
    const cases = [
      [
        '$refs that double with each level of the params',
        doubling,
        '/definitions/t/allOf/1',
        'can apply over a million schemas to one value',
        { tree: nested(16) },
      ],
      ['a loop of $ref on one value', looping, '/anyOf/1/$ref', 'is part of a loop of $ref', {}],
      [
        "2020-12's unevaluatedItems and prefixItems that double with each level of the params",
        unevaluatedDoubling,
        '/$defs/t/allOf/0',
        'can apply over a million schemas to one value',
        { tree: nested(16) },
      ],
    ] as const;

    it.each(cases)('refuses %s, naming the entry and the JSON pointer', async (_what, inputSchema, pointer, says) => {
      const reply = await call('POST', '/agents', { apiKey: 'admin', body: withTools(tool({ inputSchema })) });
      expect({ status: reply.status, body: reply.body }).toEqual({
        status: 400,
        body: {
          error: {
            code: 'VALIDATION_ERROR',
            message: expect.stringMatching(
              new RegExp(`^Invalid inputSchema of tools "hostile": .*${says.replace(/\$/g, '\\$')}`),
            ),
            details: [{ path: `/capabilities/tools/0/inputSchema${pointer}`, message: expect.stringContaining(says) }],
          },
        },
      });
    });

    it.each(cases)(
      'refuses tasks for an agent stored with %s before the rule',
      async (_what, inputSchema, pointer, _says, params) => {
        const agentId = await storedBeforeTheRules(inputSchema);
        await expectTaskRefused(
          agentId,
          params,
          new RegExp(`the inputSchema of tools/hostile cannot be used: .*at ${pointer.replace(/\$/g, '\\$')} `),
        );
      },
    );
  });

  it('answers 413 to a body over 1 MiB', async () => {
    const body = agentRegistration({ description: 'z'.repeat(1_100_000) });
    expectRefused(await call('POST', '/agents', { apiKey: 'admin', body }), 413);
  });

  it('keeps the answer to a huge invalid array small and quick', async () => {
    const reply = await call('POST', '/agents', {
      apiKey: 'admin',
      body: withTools(...Array.from({ length: 100_000 }, () => 0)),
    });
    expectRefused(reply, 400);
    expect(reply.body.error.details.length).toBeLessThanOrEqual(100);
  });

  it('accepts and stores a schema with __proto__, constructor and a self reference as data', async () => {
    const inputSchema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"number"},"self":{"$ref":"#"}}}',
    );
    const agent = await registerAgent({
      capabilities: { tools: [{ name: '__proto__', description: 'odd', inputSchema }] },
    });
    const reply = await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' });
    expect(reply.body.capabilities.tools[0].name).toBe('__proto__');
    expect(Object.keys(reply.body.capabilities.tools[0].inputSchema.properties)).toEqual([
      '__proto__',
      'constructor',
      'self',
    ]);
  });
});

describe('hostile queries and paths', () => {
  it.each([
    ['limit in exponent notation', '/agents?limit=1e2'],
    ['a NUL limit', '/agents?limit=%00'],
    ['a path for after', '/agents?after=../../etc'],
    ['a 100k-character query', `/agents/search?query=${'x'.repeat(100_000)}`],
    ['a repeated query', '/agents/search?query=a&query=b'],
    ['a repeated capability', '/agents/search?capability=tools/a&capability=tools/b'],
  ])('answers 400 to %s', async (_what, path) => {
    const reply = await call('GET', path, { apiKey: 'admin' });
    // A URL this long may be refused by Node itself with 414 or 431; never a 500.
    if (reply.status === 414 || reply.status === 431) return;
    expectRefused(reply, 400);
  });

  it('refuses bracketed operator parameters as unknown ones: the query string has no nesting', async () => {
    const reply = await call('GET', '/agents?after[$gt]=&limit=1', { apiKey: 'admin' });
    expect(expectError(reply, 400, 'VALIDATION_ERROR').message).toContain('after[$gt]');
  });

  it('treats a query of many words and regular-expression characters as plain words', async () => {
    const words = Array.from({ length: 150 }, (_, index) => `w${index}`).join(' ');
    expect(
      (await call('GET', `/agents/search?query=${encodeURIComponent(`${words} .* (a+)+$ \\`)}`, { apiKey: 'admin' }))
        .status,
    ).toBe(200);
    expect((await call('GET', `/agents/search?query=${encodeURIComponent('.*')}`, { apiKey: 'admin' })).body).toEqual(
      [],
    );
    await registerAgent({ description: 'Waits... then -- answers' });
    expect(
      (await call('GET', `/agents/search?query=${encodeURIComponent('... --')}`, { apiKey: 'admin' })).body,
    ).toEqual([]);
  });

  it.each([
    ['a NUL id', '/agents/%00'],
    ['a 5000-character id', `/agents/${'a'.repeat(5_000)}`],
    ['an operator id', '/agents/%24where'],
    ['an encoded path id', '/agents/..%2F..%2Fkeys'],
  ])('answers 404 to %s', async (_what, path) => {
    expectRefused(await call('GET', path, { apiKey: 'admin' }), 404);
  });

  it('is still healthy afterwards', async () => {
    expect((await call('GET', '/readyz')).status).toBe(200);
  });
});
