import { useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { refusedWithoutTrace } from '../support/refusals';
import { tool, waitForTask } from '../support/tasks';

/** What `search` declares it answers, and answers. */
const SEARCH_OUTPUT = {
  type: 'object',
  properties: {
    hits: {
      type: 'array',
      items: {
        type: 'object',
        properties: { title: { type: 'string' }, rank: { type: 'integer' } },
        additionalProperties: false,
      },
    },
    score: { type: 'number' },
  },
  additionalProperties: false,
};
const FOUND = { hits: [{ title: 'First hit', rank: 1 }], score: 0.75 };

/** `search` answers FOUND; every other tool answers its params. */
const answer: AgentBehaviour = (received) => ({
  status: 200,
  body: {
    status: 'completed',
    result: received.body.operation === 'tools/search' ? FOUND : received.body.params,
  },
});

const from = (field: string, type?: string) => ({ source: { taskId: '0', field }, ...(type ? { type } : {}) });

/** POST /tasks/compose checks what pending arguments read from a parent's result against the tools' schemas. */
describe('typed arguments', () => {
  const server = useAgentServer();
  const database = useTestDatabase();
  let searcher: RegisteredAgent;
  let writer: RegisteredAgent;

  beforeAll(async () => {
    searcher = await registerAgent({
      name: 'Searcher',
      mcpUrl: server().route('search', answer),
      capabilities: { tools: [{ ...tool('search', { query: { type: 'string' } }), outputSchema: SEARCH_OUTPUT }] },
    });
    writer = await registerAgent({
      name: 'Writer',
      mcpUrl: server().route('write', answer),
      capabilities: { tools: [tool('write', { text: { type: 'string' } }), tool('count', { n: { type: 'integer' } })] },
    });
  });

  const composition = (operation: string, params: Record<string, unknown>) => [
    { agentId: searcher.agentId, operation: 'tools/search', params: { query: 'typed' } },
    { agentId: writer.agentId, operation, params, parents: ['0'] },
  ];
  const traces = { database, server, agents: () => [searcher, writer] };
  // Refused before anything started: no task record, no call.
  const refusal = (body: unknown[]) => refusedWithoutTrace(traces, '/tasks/compose', body, 400, 'INVALID_COMPOSITION');

  it("refuses a field the parent's outputSchema does not have, naming both tasks and the pointer", async () => {
    const error = await refusal(composition('tools/write', { text: from('/hits/0/name') }));
    expect(error).toEqual({
      code: 'INVALID_COMPOSITION',
      message:
        'Task 1 (Writer: tools/write): param "text" reads field "/hits/0/name" of task 0 (Searcher: tools/search), which its outputSchema does not have: ' +
        'at outputSchema#/properties/hits/items, "name" is not among its properties, and additionalProperties is false',
      details: {
        mismatch: 'missing_field',
        task: { index: 1, agentId: writer.agentId, agentName: 'Writer', operation: 'tools/write', param: 'text' },
        parent: {
          index: 0,
          agentId: searcher.agentId,
          agentName: 'Searcher',
          operation: 'tools/search',
          field: '/hits/0/name',
        },
        outputSchemaPointer: '/properties/hits/items',
      },
    });
  });

  it('refuses a field whose type does not fit the param, with the pointers in both schemas', async () => {
    const error = await refusal(composition('tools/count', { n: from('score') }));
    expect(error).toEqual({
      code: 'INVALID_COMPOSITION',
      message:
        'Task 1 (Writer: tools/count): param "n" reads field "score" of task 0 (Searcher: tools/search), but its outputSchema gives it number ' +
        '(outputSchema#/properties/score), and the param takes integer (inputSchema#/properties/n)',
      details: {
        mismatch: 'type',
        task: { index: 1, agentId: writer.agentId, agentName: 'Writer', operation: 'tools/count', param: 'n' },
        parent: {
          index: 0,
          agentId: searcher.agentId,
          agentName: 'Searcher',
          operation: 'tools/search',
          field: 'score',
        },
        fieldTypes: ['number'],
        passedTypes: ['number'],
        paramTypes: ['integer'],
        outputSchemaPointer: '/properties/score',
        inputSchemaPointer: '/properties/n',
      },
    });
  });

  it("refuses an argument's type that the field never has", async () => {
    const error = await refusal(composition('tools/write', { text: from('/hits/0/title', 'number') }));
    expect(error.details).toMatchObject({
      mismatch: 'type',
      argumentType: 'number',
      fieldTypes: ['string'],
      passedTypes: [],
      outputSchemaPointer: '/properties/hits/items/properties/title',
    });
  });

  it('runs a composition whose reads fit, with the values substituted', async () => {
    const reply = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [
        ...composition('tools/write', { text: from('/hits/0/title') }),
        {
          agentId: writer.agentId,
          operation: 'tools/count',
          params: { n: from('/hits/0/rank', 'integer') },
          parents: ['0'],
        },
      ],
    });
    expect(reply.status).toBe(202);
    const tasks = await Promise.all(reply.body.map(({ taskId }: { taskId: string }) => waitForTask(taskId)));
    expect(tasks.map(({ status, result }) => ({ status, result }))).toEqual([
      { status: 'completed', result: FOUND },
      { status: 'completed', result: { text: 'First hit' } },
      { status: 'completed', result: { n: 1 } },
    ]);
  });
});
