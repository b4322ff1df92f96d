import { agentRegistration, registerAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { call, expectError } from '../support/http';
import { endlessPages, useMcpServer } from '../support/mcp-server';
import { useCardServer } from '../support/card-server';

describe('importing capabilities is bounded in work and memory', () => {
  const endless = useMcpServer({ setup: endlessPages((page, index) => `tool-${page}-${index}`) });
  const endlessInvalid = useMcpServer({ setup: endlessPages(() => 'not a valid name') });
  // Each a tool of its own name whose schema Ajv refuses: each costs a compilation to find out.
  const endlessUncompiled = useMcpServer({
    setup: endlessPages((page, index) => `tool-${page}-${index}`, {
      type: 'object',
      properties: { x: { type: 'strin' } },
    }),
  });
  const cardUrl = useCardServer({
    name: 'many skills',
    description: 'a card with more skills than a registration keeps',
    version: '1',
    skills: Array.from({ length: 1_000 }, (_, index) => ({ id: `skill-${index}`, name: `skill ${index}` })),
  });
  useTestDatabase();

  it('stops reading pages once a category is full, and says so in one warning', async () => {
    const before = endless().callsOf('tools/list').length;
    const reply = await call('POST', '/agents', {
      apiKey: 'admin',
      body: agentRegistration({ protocol: 'mcp', mcpUrl: endless().url, capabilities: undefined }),
    });
    expect(reply.status).toBe(201);
    expect(reply.body.capabilities.tools).toHaveLength(256);
    expect(reply.body.capabilities.tools[255].name).toBe('tool-0-255');
    expect(reply.body.warnings).toEqual([{ capability: 'tools', message: expect.stringContaining('256') }]);
    expect(endless().callsOf('tools/list').length - before).toBe(1);
  });

  it('stops reading pages past the bytes an import reads, and says so once', async () => {
    const before = endlessInvalid().callsOf('tools/list').length;
    const reply = await call('POST', '/agents', {
      apiKey: 'admin',
      body: agentRegistration({ protocol: 'mcp', mcpUrl: endlessInvalid().url, capabilities: undefined }),
    });
    expect(reply.status).toBe(201);
    expect(reply.body.capabilities).toEqual({ tools: [] });
    const warnings = reply.body.warnings as Array<{ capability: string; message: string }>;
    expect(warnings.filter((warning) => /bytes/.test(warning.message))).toHaveLength(1);
    expect(warnings.length).toBeLessThanOrEqual(258);
    expect(endlessInvalid().callsOf('tools/list').length - before).toBeLessThan(64);
  });

  it('stops reading a category once more than 256 of its schemas do not compile, and says so once', async () => {
    const before = endlessUncompiled().callsOf('tools/list').length;
    const reply = await call('POST', '/agents', {
      apiKey: 'admin',
      body: agentRegistration({ protocol: 'mcp', mcpUrl: endlessUncompiled().url, capabilities: undefined }),
    });
    expect(reply.status).toBe(201);
    expect(reply.body.capabilities).toEqual({ tools: [] });
    const warnings = reply.body.warnings as Array<{ capability: string; message: string }>;
    expect(warnings).toHaveLength(258);
    expect(warnings[0]).toEqual({
      capability: 'tools/tool-0-0',
      message: expect.stringMatching(/^invalid inputSchema: /),
    });
    expect(warnings.slice(256)).toEqual([
      {
        capability: 'tools',
        message: 'more than 256 tools fail the checks: the others that fail them are left out unnamed',
      },
      { capability: 'tools', message: 'more than 256 tools have schemas that do not compile: the others are not read' },
    ]);
    expect(endlessUncompiled().callsOf('tools/list').length - before).toBe(1);
  });

  it("keeps as many of an A2A card's skills as a registration holds, and says so in one warning", async () => {
    const reply = await call('POST', '/agents', {
      apiKey: 'admin',
      body: agentRegistration({ protocol: 'a2a', mcpUrl: cardUrl(), capabilities: undefined }),
    });
    expect(reply.status).toBe(201);
    expect(reply.body.capabilities.tools).toHaveLength(256);
    expect(reply.body.warnings).toEqual([{ capability: 'tools', message: expect.stringContaining('256') }]);
  });

  it("refuses an owner's second refresh of an agent in a row with 429 and Retry-After; an admin is not limited", async () => {
    const owner = (await call('POST', '/keys', { apiKey: 'admin', body: { description: 'owner' } })).body.apiKey;
    const agent = await registerAgent({ protocol: 'a2a', mcpUrl: cardUrl(), capabilities: undefined }, owner);
    const path = `/agents/${agent.agentId}/capabilities/refresh`;
    expect((await call('POST', path, { apiKey: owner })).status).toBe(200);
    const refused = await call('POST', path, { apiKey: owner });
    expectError(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await call('POST', path, { apiKey: 'admin' })).status).toBe(200);
  });
});
