import { agentRegistration, registerAgent } from '../support/agents';
import { openedSigningSecret, useTestDatabase } from '../support/database';
import { call, expectError } from '../support/http';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const database = useTestDatabase();
const storedAgent = (agentId: string) =>
  database()
    .collection('agents')
    .findOne({ _id: agentId as never });

describe('POST /agents', () => {
  it('registers an agent and answers 201 with shapes A and B, apiKey and signingSecret', async () => {
    const body = agentRegistration({ imageUrl: 'https://example.com/a.png', websiteUrl: 'https://example.com' });
    const reply = await call('POST', '/agents', { apiKey: 'admin', body });
    expect(reply.status).toBe(201);
    const agent = reply.body;
    expect(agent).toMatchObject({
      name: body.name,
      status: 'active',
      description: body.description,
      defaultPrompt: body.defaultPrompt,
      imageUrl: 'https://example.com/a.png',
      backgroundImageUrl: null,
      websiteUrl: 'https://example.com',
      mcpUrl: body.mcpUrl,
      chatUrl: body.chatUrl,
      capabilities: body.capabilities,
      visibility: 'public',
    });
    expect(agent.agentId).toMatch(UUID);
    expect(agent.id).toBe(agent.agentId);
    expect(agent.createdAt).toMatch(ISO);
    expect(agent.updatedAt).toBe(agent.createdAt);
    expect(agent.apiKey).toMatch(/^acs_/);
    expect(agent.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(agent.signingSecret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(reply.headers.get('location')).toBe(`/agents/${agent.agentId}`);

    const stored = await storedAgent(agent.agentId);
    expect(stored).toMatchObject({ name: body.name, operations: ['tools/echo'], version: 1 });
    expect(openedSigningSecret(stored)).toBe(agent.signingSecret);
    expect(stored!.searchTokens).toEqual(expect.arrayContaining(['echo', 'echoes', 'returns', 'text']));
    expect(JSON.parse(stored!.capabilities)).toEqual(body.capabilities);
  });

  it('serves the same route under /v1', async () => {
    const reply = await call('POST', '/v1/agents', { apiKey: 'admin', body: agentRegistration() });
    expect(reply.status).toBe(201);
    expect((await call('GET', `/v1/agents/${reply.body.agentId}`, { apiKey: 'admin' })).status).toBe(200);
  });

  it('issues an agent key that authenticates as the agent', async () => {
    const agent = await registerAgent();
    const reply = await call('GET', `/agents/${agent.agentId}`, { apiKey: agent.apiKey });
    expect(reply.status).toBe(200);
    expect(reply.body.agentId).toBe(agent.agentId);
  });

  it('answers 401 without a credential and with an unknown key', async () => {
    expectError(await call('POST', '/agents', { body: agentRegistration() }), 401, 'UNAUTHENTICATED');
    expectError(
      await call('POST', '/agents', {
        apiKey: 'acs_AAAAAAAAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        body: agentRegistration(),
      }),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('answers 403 to an agent key', async () => {
    const agent = await registerAgent();
    expectError(await call('POST', '/agents', { apiKey: agent.apiKey, body: agentRegistration() }), 403, 'FORBIDDEN');
  });
});

describe('GET /agents/{id}', () => {
  it('returns the agent without secrets', async () => {
    const agent = await registerAgent();
    const reply = await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      agentId: agent.agentId,
      id: agent.agentId,
      name: agent.name,
      status: 'active',
      createdAt: agent.createdAt,
    });
    expect(reply.body).not.toHaveProperty('apiKey');
    expect(reply.body).not.toHaveProperty('signingSecret');
  });

  it('answers 404 AGENT_NOT_FOUND for an unknown id and 401 without a credential', async () => {
    expectError(
      await call('GET', '/agents/00000000-0000-4000-8000-000000000000', { apiKey: 'admin' }),
      404,
      'AGENT_NOT_FOUND',
    );
    expectError(await call('GET', '/agents/not-a-uuid', { apiKey: 'admin' }), 404, 'AGENT_NOT_FOUND');
    const agent = await registerAgent();
    expectError(await call('GET', `/agents/${agent.agentId}`), 401, 'UNAUTHENTICATED');
  });
});

describe('registration rules', () => {
  const tool = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: `the ${name} tool`,
    inputSchema: { type: 'object' },
    ...extra,
  });
  const withTools = (...tools: unknown[]) => agentRegistration({ capabilities: { tools } });
  const without = (field: string) => {
    const body = agentRegistration();
    delete body[field];
    return body;
  };

  it.each([
    ['no name', without('name'), '/'],
    ['no description', without('description'), '/'],
    ['no defaultPrompt', without('defaultPrompt'), '/'],
    ['no capabilities', without('capabilities'), '/'],
    ['no mcpUrl nor mcpEndpoint', without('mcpUrl'), '/'],
    ['no chatUrl nor chatEndpoint', without('chatUrl'), '/'],
    ['an empty name', agentRegistration({ name: '' }), '/name'],
    ['a number for a name', agentRegistration({ name: 42 }), '/name'],
    ['a relative mcpUrl', agentRegistration({ mcpUrl: '/mcp' }), '/mcpUrl'],
    ['an ftp chatUrl', agentRegistration({ chatUrl: 'ftp://example.com/chat' }), '/chatUrl'],
    ['a javascript: imageUrl', agentRegistration({ imageUrl: 'javascript:alert(1)' }), '/imageUrl'],
    ['a malformed websiteUrl', agentRegistration({ websiteUrl: 'http://exa mple.com' }), '/websiteUrl'],
    ['a bad backgroundImageUrl', agentRegistration({ backgroundImageUrl: 'not a url' }), '/backgroundImageUrl'],
    ['a bad callbackUrl', agentRegistration({ callbackUrl: 'mailto:a@b.c' }), '/callbackUrl'],
    ['tools not an array', agentRegistration({ capabilities: { tools: {} } }), '/capabilities/tools'],
    ['no tools', agentRegistration({ capabilities: {} }), '/capabilities'],
    ['an unknown capability category', agentRegistration({ capabilities: { tools: [], skills: [] } }), '/capabilities'],
    ['a tool without inputSchema', withTools({ name: 'a', description: 'b' }), '/capabilities/tools/0'],
    ['a tool without description', withTools({ name: 'a', inputSchema: { type: 'object' } }), '/capabilities/tools/0'],
    ['a tool name with a slash', withTools(tool('a/b')), '/capabilities/tools/0/name'],
    ['a tool name with a space', withTools(tool('a b')), '/capabilities/tools/0/name'],
    ['an empty tool name', withTools(tool('')), '/capabilities/tools/0/name'],
    ['a tool name of 129 characters', withTools(tool('x'.repeat(129))), '/capabilities/tools/0/name'],
    ['an inputSchema that is an array', withTools(tool('a', { inputSchema: [] })), '/capabilities/tools/0/inputSchema'],
    [
      'an inputSchema of a string',
      withTools(tool('a', { inputSchema: { type: 'string' } })),
      '/capabilities/tools/0/inputSchema/type',
    ],
    [
      'an inputSchema whose type is a list',
      withTools(tool('a', { inputSchema: { type: ['object', 'null'] } })),
      '/capabilities/tools/0/inputSchema/type',
    ],
    [
      'an inputSchema without a type',
      withTools(tool('a', { inputSchema: { properties: { text: { type: 'string' } } } })),
      '/capabilities/tools/0/inputSchema',
    ],
    [
      'an outputSchema that is a string',
      withTools(tool('a', { annotations: { outputSchema: 'object' } })),
      '/capabilities/tools/0/annotations/outputSchema',
    ],
    [
      'a prompt without a name',
      agentRegistration({ capabilities: { tools: [], prompts: [{ description: 'x' }] } }),
      '/capabilities/prompts/0',
    ],
    ['a visibility of "secret"', agentRegistration({ visibility: 'secret' }), '/visibility'],
    ['sharedWith not an array', agentRegistration({ sharedWith: 'user-1' }), '/sharedWith'],
    ['sharedWith with an empty id', agentRegistration({ sharedWith: [''] }), '/sharedWith/0'],
    ['a body that is an array', [agentRegistration()], '/'],
  ])('answers 400 to %s', async (_what, body, path) => {
    const error = expectError(await call('POST', '/agents', { apiKey: 'admin', body }), 400, 'VALIDATION_ERROR');
    expect((error.details as Array<{ path: string }>).map((problem) => problem.path)).toContain(path);
  });

  it('answers 400 to an empty body', async () => {
    expectError(await call('POST', '/agents', { apiKey: 'admin' }), 400, 'VALIDATION_ERROR');
  });

  it.each([
    [
      'inputSchema',
      tool('translate', { inputSchema: { type: 'object', frobnicate: true } }),
      /translate.*inputSchema|inputSchema.*translate/,
      /unknown keyword/,
    ],
    [
      'annotations.outputSchema',
      tool('translate', { annotations: { outputSchema: { type: 'strin' } } }),
      /translate/,
      /type/,
    ],
    [
      'a remote $ref',
      tool('translate', { inputSchema: { type: 'object', $ref: 'https://example.com/schema.json' } }),
      /translate/,
      /can't resolve reference/,
    ],
  ])('answers 400 naming the tool and why when its %s does not compile', async (_what, badTool, names, why) => {
    const body = withTools(tool('fine'), badTool);
    const error = expectError(await call('POST', '/agents', { apiKey: 'admin', body }), 400, 'VALIDATION_ERROR');
    expect(error.message).toMatch(names);
    expect(error.message).toMatch(why);
    expect((error.details as Array<{ path: string }>)[0].path).toMatch(/^\/capabilities\/tools\/1\//);
  });

  it('refuses a PATCH that gives a tool an inputSchema that is not an object, and keeps the agent', async () => {
    const agent = await registerAgent();
    const body = { capabilities: { tools: [tool('a'), tool('count', { inputSchema: { type: 'integer' } })] } };
    const error = expectError(
      await call('PATCH', `/agents/${agent.agentId}`, { apiKey: 'admin', body }),
      400,
      'VALIDATION_ERROR',
    );
    expect(error.details).toContainEqual({
      path: '/capabilities/tools/1/inputSchema/type',
      message: 'must be "object": a tool takes an object of arguments',
    });
    expect((await storedAgent(agent.agentId))?.version).toBe(1);
  });

  it('compiles the inputSchema of prompts, resources and experimental entries too', async () => {
    const body = agentRegistration({
      capabilities: { tools: [], resources: [{ name: 'files', inputSchema: { type: 'nope' } }] },
    });
    const error = expectError(await call('POST', '/agents', { apiKey: 'admin', body }), 400, 'VALIDATION_ERROR');
    expect(error.message).toMatch(/resources "files"/);
  });

  it('answers 409 CONFLICT to a duplicate tool name', async () => {
    const error = expectError(
      await call('POST', '/agents', { apiKey: 'admin', body: withTools(tool('same'), tool('other'), tool('same')) }),
      409,
      'CONFLICT',
    );
    expect(error.message).toContain('"same"');
  });

  it('accepts the same name in different capability categories, and every category', async () => {
    const capabilities = {
      tools: [tool('summarise')],
      prompts: [{ name: 'summarise', description: 'a prompt' }],
      resources: [{ name: 'docs.v1', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }],
      experimental: [{ name: 'beta-thing' }],
    };
    const agent = await registerAgent({ capabilities });
    expect(agent.capabilities).toEqual(capabilities);
    const stored = await storedAgent(agent.agentId);
    expect(stored!.operations).toEqual([
      'tools/summarise',
      'prompts/summarise',
      'resources/docs.v1',
      'experimental/beta-thing',
    ]);
  });

  it('keeps schemas with $-keys and dotted keys intact', async () => {
    const inputSchema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      $defs: { point: { type: 'object', properties: { 'x.y': { type: 'number' } } } },
      properties: { at: { $ref: '#/$defs/point' }, when: { type: 'string', format: 'date-time' } },
      required: ['at'],
    };
    const agent = await registerAgent({ capabilities: { tools: [tool('plot', { inputSchema })] } });
    const reply = await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' });
    expect(reply.body.capabilities.tools[0].inputSchema).toEqual(inputSchema);
  });

  describe('schemas in JSON Schema 2020-12 (the default) and draft-07 (when declared)', () => {
    const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
    /** A point of two coordinates and nothing else, as 2020-12 says it. */
    const point = (declaration: Record<string, unknown>) => ({
      ...declaration,
      type: 'object',
      $defs: { coordinate: { $anchor: 'coordinate', type: 'number' } },
      properties: {
        at: { type: 'array', prefixItems: [{ $ref: '#coordinate' }, { $ref: '#/$defs/coordinate' }], items: false },
      },
      allOf: [{ properties: { label: { type: 'string' } } }],
      required: ['at'],
      unevaluatedProperties: false,
    });
    const task = (agentId: string, params: Record<string, unknown>) =>
      call('POST', '/tasks', { apiKey: 'admin', body: { agentId, operation: 'tools/plot', params } });

    it.each([
      ['declared', { $schema: DRAFT_2020 }],
      ['by default', {}],
    ])('registers a 2020-12 schema %s, returns it as sent, and checks params with it', async (_how, declaration) => {
      const inputSchema = point(declaration);
      const agent = await registerAgent({ capabilities: { tools: [tool('plot', { inputSchema })] } });
      const reply = await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' });
      expect(JSON.stringify(reply.body.capabilities.tools[0].inputSchema)).toBe(JSON.stringify(inputSchema));

      expect((await task(agent.agentId, { at: [1, 2], label: 'here' })).status).toBe(202);
      for (const [params, problem] of [
        [
          { at: [1, 2], colour: 'red' },
          { path: '/', message: 'unknown property "colour"' },
        ],
        [{ at: [1, 'two'] }, { path: '/at/1', message: 'must be number' }],
        [{ at: [1, 2, 3] }, { path: '/at', message: 'must NOT have more than 2 items' }],
      ] as const) {
        const refused = await task(agent.agentId, params);
        expect(expectError(refused, 400, 'VALIDATION_ERROR').details).toEqual([problem]);
      }
    });

    it('refuses a schema of another dialect, naming the two it reads and where', async () => {
      const $schema = 'https://json-schema.org/draft/2019-09/schema';
      const body = agentRegistration({ capabilities: { tools: [tool('plot', { inputSchema: point({ $schema }) })] } });
      const error = expectError(await call('POST', '/agents', { apiKey: 'admin', body }), 400, 'VALIDATION_ERROR');
      expect(error.details).toEqual([
        {
          path: '/capabilities/tools/0/inputSchema/$schema',
          message: `$schema "${$schema}" is not a dialect this service reads: use JSON Schema 2020-12 ("${DRAFT_2020}", the default when $schema is absent) or draft-07 ("http://json-schema.org/draft-07/schema#")`,
        },
      ]);
    });
  });

  it('accepts mcpEndpoint and chatEndpoint as aliases and answers with mcpUrl and chatUrl', async () => {
    const body = agentRegistration({
      mcpEndpoint: 'http://127.0.0.1:9/other-mcp',
      chatEndpoint: 'http://127.0.0.1:9/other-chat',
    });
    delete body.mcpUrl;
    delete body.chatUrl;
    const reply = await call('POST', '/agents', { apiKey: 'admin', body });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      mcpUrl: 'http://127.0.0.1:9/other-mcp',
      chatUrl: 'http://127.0.0.1:9/other-chat',
    });
    expect(reply.body).not.toHaveProperty('mcpEndpoint');
  });

  it('accepts an alias equal to its field, and answers 400 when they differ', async () => {
    const same = agentRegistration();
    expect(
      (
        await call('POST', '/agents', {
          apiKey: 'admin',
          body: { ...same, mcpEndpoint: same.mcpUrl, chatEndpoint: same.chatUrl },
        })
      ).status,
    ).toBe(201);
    const error = expectError(
      await call('POST', '/agents', {
        apiKey: 'admin',
        body: { ...same, chatEndpoint: 'http://127.0.0.1:9/elsewhere' },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect(error.message).toMatch(/chatUrl and chatEndpoint/);
  });

  it('stores optional visibility, sharedWith (without repeats) and callbackUrl', async () => {
    const agent = await registerAgent({
      visibility: 'private',
      sharedWith: ['user-a', 'user-a', 'user-b'],
      callbackUrl: 'http://127.0.0.1:9/done',
    });
    expect(agent).toMatchObject({
      visibility: 'private',
      sharedWith: [
        { type: 'HUMAN', id: 'user-a' },
        { type: 'HUMAN', id: 'user-b' },
      ],
      callbackUrl: 'http://127.0.0.1:9/done',
      owner: null,
    });
  });

  it('refuses an unknown member, at registration and in a change, naming it; keeps what a tool entry carries', async () => {
    const unknown = expectError(
      await call('POST', '/agents', { apiKey: 'admin', body: agentRegistration({ colour: 'blue' }) }),
      400,
      'VALIDATION_ERROR',
    );
    expect(JSON.stringify(unknown)).toContain('colour');
    const agent = await registerAgent({
      capabilities: { tools: [{ name: 'a', description: 'b', inputSchema: { type: 'object' }, title: 'A tool' }] },
    });
    expect(agent.capabilities.tools[0]).toMatchObject({ title: 'A tool' });
    expectError(
      await call('PATCH', `/agents/${agent.agentId}`, { apiKey: 'admin', body: { colour: 'blue' } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await call('GET', '/agents?colour=blue', { apiKey: 'admin' }), 400, 'VALIDATION_ERROR');
  });
});
