import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_SCHEMAS_EXTENSION } from '../../src/agent-calls/a2a-protocol';
import { accepts, useAgentServer } from '../support/agent-server';
import { agentRegistration } from '../support/agents';
import { useCardServer } from '../support/card-server';
import { call } from '../support/http';
import { endlessPages, useMcpServer } from '../support/mcp-server';
import { scrape, valueOf } from '../support/prometheus';
import { startOwnService, type OwnService } from '../support/own-service';

/**
 * No single request holds the service's event loop (docs/security.md, "No request stalls the
 * service"): each costly schema shape, with as much data as the body limit lets through, sent
 * through each way an agent's schema arrives. The event loop's worst delay during the request is
 * the service's own `nodejs_eventloop_lag_max_seconds`, which resets at each scrape (prom-client's
 * monitorEventLoopDelay). The property is 100 ms; the budget here leaves room for a busy machine,
 * and is far below what these requests cost on the event loop itself (seconds to a minute).
 */
const BUDGET_SECONDS = 1;

const objects = (count: number) => Array.from({ length: count }, (_, index) => ({ k: index }));
const times = <T>(count: number, item: T): T[] => Array.from({ length: count }, () => item);
const wrap = (schema: Record<string, unknown>) => ({ type: 'object', properties: { a: schema }, required: ['a'] });

/** Each costly shape: the schema of `a`, and a value of `a` that is almost 1 MiB of JSON at most. */
const CATALOGUE: Array<{ name: string; schema: Record<string, unknown>; data: () => unknown }> = [
  {
    name: 'enum-objects',
    schema: { type: 'array', items: { enum: objects(6_000) } },
    data: () => times(85_000, { k: 5_999 }),
  },
  {
    name: 'enum-strings',
    schema: { type: 'array', items: { enum: Array.from({ length: 4_000 }, (_, index) => `s${index}`) } },
    data: () => times(80_000, 's3999'),
  },
  {
    name: 'enum-numbers',
    schema: { type: 'array', items: { enum: Array.from({ length: 10_000 }, (_, index) => index) } },
    data: () => times(100_000, 9_999),
  },
  {
    name: 'properties-objects',
    schema: {
      type: 'array',
      items: {
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: 400 }, (_, index) => [`p${index}`, { type: 'string' }])),
      },
    },
    data: () => times(20_000, { p0: 'x', p399: 'y' }),
  },
  {
    name: 'anyOf-items',
    schema: {
      type: 'array',
      items: { anyOf: Array.from({ length: 30 }, (_, index) => ({ required: [`z${index}`] })) },
    },
    data: () => times(100_000, { y: 1 }),
  },
  {
    name: 'oneOf-items',
    schema: {
      type: 'array',
      items: { oneOf: Array.from({ length: 30 }, (_, index) => ({ required: [`z${index}`] })) },
    },
    data: () => times(100_000, { y: 1 }),
  },
  {
    name: 'format-uri-reference',
    schema: { type: 'string', format: 'uri-reference' },
    data: () => 'a'.repeat(1_000_000),
  },
  { name: 'format-email', schema: { type: 'string', format: 'email' }, data: () => `${'a'.repeat(1_000_000)}@` },
  { name: 'pattern', schema: { type: 'string', pattern: '^(a|aa)*b$' }, data: () => 'a'.repeat(1_000_000) },
  {
    name: 'contains',
    schema: { type: 'array', contains: { enum: objects(3_000) } },
    data: () => times(60_000, { k: -1 }),
  },
  {
    name: 'nested-items',
    schema: { type: 'array', items: { type: 'array', items: { type: 'array', items: { enum: objects(2_000) } } } },
    data: () => times(100, times(100, times(8, { k: 1_999 }))),
  },
  { name: 'uniqueItems', schema: { type: 'array', uniqueItems: true }, data: () => objects(40_000) },
  {
    // JSON Schema 2020-12: every anyOf branch runs, to learn which members it evaluated, then each
    // member is looked up among them.
    name: 'unevaluatedProperties',
    schema: {
      type: 'array',
      items: {
        anyOf: Array.from({ length: 15 }, (_, index) => ({ properties: { [`z${index}`]: { type: 'string' } } })),
        unevaluatedProperties: false,
      },
    },
    data: () => times(85_000, { z0: 'a' }),
  },
];

/** A schema that takes Ajv seconds to compile: refused at registration, left out of imports. */
const SLOW_TO_COMPILE = wrap({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: 2_000 }, (_, index) => [`p${index}`, { type: 'string' }])),
});

const tools = CATALOGUE.map(({ name, schema }) => ({
  name,
  description: `costly: ${name}`,
  inputSchema: wrap(schema),
}));

/** An A2A Agent Card whose skills are the catalogue's, with their schemas in the service's extension. */
const COSTLY_CARD = {
  name: 'costly skills',
  description: 'skills whose schemas cost much to check',
  version: '1',
  capabilities: {
    extensions: [
      {
        uri: TOOL_SCHEMAS_EXTENSION,
        params: {
          inputSchemas: Object.fromEntries([
            ...tools.map((tool) => [tool.name, tool.inputSchema]),
            ['slow-to-compile', SLOW_TO_COMPILE],
          ]),
        },
      },
    ],
  },
  skills: [...tools, { name: 'slow-to-compile' }].map(({ name }) => ({ id: name, name, description: name })),
};

describe('no request holds the event loop, whatever the schema and the data', () => {
  const agentServer = useAgentServer();
  const mcp = useMcpServer({
    setup: (server) => {
      server.server.registerCapabilities({ tools: {} });
      server.server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [...tools, { name: 'slow-to-compile', description: 'slow', inputSchema: SLOW_TO_COMPILE }],
      }));
    },
  });
  const cardUrl = useCardServer(COSTLY_CARD);
  const endless = useMcpServer({ setup: endlessPages((page, index) => `tool-${page}-${index}`) });
  const endlessInvalid = useMcpServer({ setup: endlessPages(() => 'not a valid name') });
  let service: OwnService;

  beforeAll(async () => {
    service = await startOwnService('event-loop', { SCHEMA_CHECK_TIMEOUT_MS: '1000' });
  });
  afterAll(() => service?.stop());

  /** What `request` answers, and the event loop's worst delay (s) in the service while it ran. */
  async function measured<T>(request: () => Promise<T>): Promise<{ answer: T; worstDelay: number }> {
    await scrape(service.baseUrl);
    const answer = await request();
    const { samples } = await scrape(service.baseUrl);
    return { answer, worstDelay: valueOf(samples, 'nodejs_eventloop_lag_max_seconds') };
  }

  const register = (body: Record<string, unknown>) =>
    measured(() => call('POST', '/agents', { apiKey: 'admin', baseUrl: service.baseUrl, body }));

  const ways: Array<[string, () => Record<string, unknown>]> = [
    [
      'registration',
      () => agentRegistration({ mcpUrl: agentServer().route('costly', accepts), capabilities: { tools } }),
    ],
    ['an MCP import', () => agentRegistration({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined })],
    ['an A2A card', () => agentRegistration({ protocol: 'a2a', mcpUrl: cardUrl(), capabilities: undefined })],
  ];

  describe.each(ways)('schemas that arrive through %s', (way, registration) => {
    let agentId: string;

    beforeAll(async () => {
      const { answer, worstDelay } = await register(registration());
      expect(answer.status).toBe(201);
      expect(worstDelay).toBeLessThan(BUDGET_SECONDS);
      const kept = (answer.body.capabilities.tools as Array<{ name: string }>).map((tool) => tool.name);
      expect(kept).toEqual(tools.map((tool) => tool.name));
      if (way !== 'registration')
        expect(answer.body.warnings).toEqual([
          {
            capability: 'tools/slow-to-compile',
            message: expect.stringMatching(/cut off: it ran longer than 1000 ms/),
          },
        ]);
      agentId = answer.body.agentId;
    });

    it.each(CATALOGUE.map(({ name, data }) => [name, data] as const))(
      '%s: the task is answered (accepted, or refused as too costly to check) without a stall',
      async (name, data) => {
        const body = { agentId, operation: `tools/${name}`, params: { a: data() } };
        const { answer, worstDelay } = await measured(() =>
          call('POST', '/tasks', { apiKey: 'admin', baseUrl: service.baseUrl, body }),
        );
        if (answer.status === 400) {
          expect(answer.body.error.code).toBe('VALIDATION_ERROR');
          expect(answer.body.error.message).toMatch(/was cut off: it ran longer than 1000 ms|params do not match/);
        } else expect(answer.status).toBe(202);
        expect(worstDelay).toBeLessThan(BUDGET_SECONDS);
        const health = await call('GET', '/healthz', { baseUrl: service.baseUrl });
        expect(health.status).toBe(200);
      },
    );
  });

  it('refuses at registration a schema that takes too long to compile, without a stall', async () => {
    const body = agentRegistration({
      mcpUrl: agentServer().route('slow', accepts),
      capabilities: { tools: [{ name: 'slow-to-compile', description: 'slow', inputSchema: SLOW_TO_COMPILE }] },
    });
    const { answer, worstDelay } = await register(body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(/compiling this schema was cut off: it ran longer than 1000 ms/);
    expect(worstDelay).toBeLessThan(BUDGET_SECONDS);
  });

  it.each([
    ['tools that pass the checks', () => endless().url],
    ['tools that fail them', () => endlessInvalid().url],
  ])('imports a tool list that pages forever, of %s, without a stall', async (_what, url) => {
    const { answer, worstDelay } = await register(
      agentRegistration({ protocol: 'mcp', mcpUrl: url(), capabilities: undefined }),
    );
    expect(answer.status).toBe(201);
    expect(answer.body.warnings.length).toBeLessThanOrEqual(258);
    expect(worstDelay).toBeLessThan(BUDGET_SECONDS);
  });

  it('hashes a request under an Idempotency-Key, a megabyte of objects with keys out of order, without a stall', async () => {
    const registered = await register(
      agentRegistration({
        mcpUrl: agentServer().route('any', accepts),
        capabilities: { tools: [{ name: 'any', description: 'takes anything', inputSchema: { type: 'object' } }] },
      }),
    );
    expect(registered.answer.status).toBe(201);
    const body = {
      agentId: registered.answer.body.agentId,
      operation: 'tools/any',
      params: { a: times(40_000, { z: 1, a: [1], m: 'x' }) },
    };
    const { answer, worstDelay } = await measured(() =>
      call('POST', '/tasks', {
        apiKey: 'admin',
        baseUrl: service.baseUrl,
        body,
        headers: { 'Idempotency-Key': `loop-${Date.now()}` },
      }),
    );
    expect(answer.status).toBe(202);
    expect(worstDelay).toBeLessThan(BUDGET_SECONDS);
  });
});
