import { useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { refusedWithoutTrace } from '../support/refusals';
import { tool } from '../support/tasks';

/** What `search` declares it answers: an array of hits, and a score. */
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
    lang: { type: 'string' },
    score: { type: 'number' },
  },
  additionalProperties: false,
};

const answer: AgentBehaviour = () => ({
  status: 200,
  body: { status: 'completed', result: { hits: [], lang: 'en', score: 0.5 } },
});

const item = (field?: string, type?: string) => ({
  source: { item: true, ...(field === undefined ? {} : { field }) },
  ...(type === undefined ? {} : { type }),
});
const from = (taskId: string, field: string) => ({ source: { taskId, field } });

/**
 * POST /tasks/compose with maps (`forEach`): what it refuses before anything starts, and what it
 * accepts. The maps' runs are tested elsewhere: nothing here waits for one.
 */
describe('map requests', () => {
  const server = useAgentServer();
  const database = useTestDatabase();
  let searcher: RegisteredAgent;
  let writer: RegisteredAgent;

  beforeAll(async () => {
    searcher = await registerAgent({
      name: 'Searcher',
      mcpUrl: server().route('map-search', answer),
      capabilities: { tools: [{ ...tool('search', { query: { type: 'string' } }), outputSchema: SEARCH_OUTPUT }] },
    });
    writer = await registerAgent({
      name: 'Writer',
      mcpUrl: server().route('map-write', answer),
      capabilities: {
        tools: [
          tool('summarise', { title: { type: 'string' }, lang: { type: 'string' }, style: { type: 'string' } }, []),
          tool('count', { n: { type: 'integer' } }),
        ],
      },
    });
  });

  const searchTask = () => ({ agentId: searcher.agentId, operation: 'tools/search', params: { query: 'maps' } });
  const mapTask = (params: Record<string, unknown>, forEach: unknown, operation = 'tools/summarise') => ({
    agentId: writer.agentId,
    operation,
    params,
    parents: ['0'],
    forEach,
  });
  const overHits = (extra: Record<string, unknown> = {}) => ({ source: { taskId: '0', field: 'hits' }, ...extra });
  const traces = { database, server, agents: () => [searcher, writer] };
  const refusal = (path: string, body: unknown, status: number, code: string) =>
    refusedWithoutTrace(traces, path, body, status, code);
  /** A task as `details` names it. */
  const named = (index: number, agent: RegisteredAgent, operation: string) => ({
    index,
    agentId: agent.agentId,
    agentName: agent.name,
    operation,
  });

  it('refuses a forEach whose source is not among the parents, naming the task', async () => {
    const error = await refusal(
      '/tasks/compose',
      [searchTask(), searchTask(), mapTask({ title: item('title') }, { source: { taskId: '1', field: 'hits' } })],
      400,
      'INVALID_COMPOSITION',
    );
    expect(error.message).toBe('Task 2: its forEach reads task "1", which is not among its parents');
  });

  it('refuses an item argument in a composed task without forEach, naming the task and param', async () => {
    const withoutForEach = mapTask({ title: item('title') }, undefined);
    const error = await refusal('/tasks/compose', [searchTask(), withoutForEach], 400, 'INVALID_COMPOSITION');
    expect(error.message).toBe(
      'Task 1: param "title" takes its value from an item, but the task has no forEach to run over items',
    );
  });

  it('refuses an item argument in POST /tasks, naming the param', async () => {
    const error = await refusal(
      '/tasks',
      { agentId: writer.agentId, operation: 'tools/summarise', params: { title: item('title') } },
      400,
      'VALIDATION_ERROR',
    );
    expect(error.message).toBe(
      'Param "title" is an item argument: those need a task with forEach in POST /tasks/compose',
    );
  });

  it.each([
    ['a maxConcurrency of 0', overHits({ maxConcurrency: 0 }), '/1/forEach/maxConcurrency', 'must be >= 1'],
    ['a maxConcurrency of 101', overHits({ maxConcurrency: 101 }), '/1/forEach/maxConcurrency', 'must be <= 100'],
    ['an unknown onItemFailure', overHits({ onItemFailure: 'retry' }), '/1/forEach/onItemFailure', 'allowed values'],
    ['an unknown member', overHits({ parallel: true }), '/1/forEach', 'parallel'],
    ['a source without field', { source: { taskId: '0' } }, '/1/forEach/source', 'field'],
  ])('refuses %s with the pointer of the member', async (_what, forEach, path, message) => {
    const error = await refusal(
      '/tasks/compose',
      [searchTask(), mapTask({ title: item('title') }, forEach)],
      400,
      'VALIDATION_ERROR',
    );
    expect(error.details).toEqual([{ path, message: expect.stringContaining(message) }]);
  });

  it("refuses a forEach field that the parent's outputSchema gives no array, naming both tasks and the pointer", async () => {
    const error = await refusal(
      '/tasks/compose',
      [searchTask(), mapTask({ title: item() }, { source: { taskId: '0', field: 'score' } })],
      400,
      'INVALID_COMPOSITION',
    );
    expect(error).toEqual({
      code: 'INVALID_COMPOSITION',
      message:
        'Task 1 (Writer: tools/summarise): its map (forEach) reads field "score" of task 0 (Searcher: tools/search), ' +
        'but its outputSchema gives it number (outputSchema#/properties/score), not an array',
      details: {
        mismatch: 'type',
        task: {
          ...named(1, writer, 'tools/summarise'),
          forEach: true,
        },
        parent: {
          ...named(0, searcher, 'tools/search'),
          field: 'score',
        },
        fieldTypes: ['number'],
        outputSchemaPointer: '/properties/score',
      },
    });
  });

  it('refuses an element field whose type does not fit the param, with the pointers in both schemas', async () => {
    const error = await refusal(
      '/tasks/compose',
      [searchTask(), mapTask({ n: item('title') }, overHits(), 'tools/count')],
      400,
      'INVALID_COMPOSITION',
    );
    expect(error).toEqual({
      code: 'INVALID_COMPOSITION',
      message:
        'Task 1 (Writer: tools/count): param "n" reads field "title" of each element of field "hits" of task 0 (Searcher: tools/search), ' +
        'but its outputSchema gives it string (outputSchema#/properties/hits/items/properties/title), and the param takes integer (inputSchema#/properties/n)',
      details: {
        mismatch: 'type',
        task: {
          ...named(1, writer, 'tools/count'),
          param: 'n',
          item: true,
          itemField: 'title',
        },
        parent: {
          ...named(0, searcher, 'tools/search'),
          field: 'hits',
        },
        fieldTypes: ['string'],
        passedTypes: ['string'],
        paramTypes: ['integer'],
        outputSchemaPointer: '/properties/hits/items/properties/title',
        inputSchemaPointer: '/properties/n',
      },
    });
  });

  it('refuses an element field the items schema does not have', async () => {
    const error = await refusal(
      '/tasks/compose',
      [searchTask(), mapTask({ title: item('/name') }, overHits())],
      400,
      'INVALID_COMPOSITION',
    );
    expect(error).toMatchObject({
      message: expect.stringContaining(
        'param "title" reads field "/name" of each element of field "hits" of task 0 (Searcher: tools/search), which its outputSchema does not have',
      ),
      details: { mismatch: 'missing_field', outputSchemaPointer: '/properties/hits/items' },
    });
  });

  it('accepts a map with item arguments, pending arguments and literal params, and records its tasks as sent', async () => {
    const params = { title: item('title', 'string'), lang: from('0', 'lang'), style: 'short' };
    const reply = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [searchTask(), mapTask(params, overHits({ maxConcurrency: 3, onItemFailure: 'continue' }))],
    });
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual([
      { taskId: expect.any(String), status: 'pending', compositionId: expect.any(String) },
      { taskId: expect.any(String), status: 'pending', compositionId: reply.body[0].compositionId },
    ]);
    const mapTaskId = reply.body[1].taskId;
    const stored = await database()
      .collection('tasks')
      .findOne({ _id: mapTaskId } as never);
    expect(stored).toMatchObject({ agentId: writer.agentId, operation: 'tools/summarise', index: 1 });
    // Kept as sent: the item arguments are filled in per item, when the map runs.
    expect(JSON.parse(stored!.params)).toEqual(params);
  });
});
