import { ApiError } from '../http/errors';
import type { TaskRequest } from '../../workflows/task-types';
import { checkTypedArguments, type ComposedTool } from './typed-arguments';

const SEARCH_OUTPUT = {
  type: 'object',
  properties: {
    total: { type: 'integer' },
    score: { type: 'number' },
    title: { type: ['string', 'null'] },
    hits: {
      type: 'array',
      items: {
        type: 'object',
        properties: { url: { type: 'string' }, rank: { type: 'integer' } },
        additionalProperties: false,
      },
    },
    summary: {
      anyOf: [
        { type: 'string' },
        { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
      ],
    },
  },
  additionalProperties: false,
};

const search: ComposedTool = {
  agent: { id: 'agent-s', name: 'Search' },
  operation: 'tools/search',
  entry: { name: 'search', description: '', inputSchema: { type: 'object' }, outputSchema: SEARCH_OUTPUT },
};

/** A consuming tool whose params are `properties`. */
const consumer = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}): ComposedTool => ({
  agent: { id: 'agent-c', name: 'Consumer' },
  operation: 'tools/consume',
  entry: { name: 'consume', description: '', inputSchema: { type: 'object', properties, ...extra } },
});

const from = (field: string, type?: string) => ({ source: { taskId: '0', field }, ...(type ? { type } : {}) });

/** A composition of `parent` and one child that fills its param `param` with `argument`. */
function check(child: ComposedTool, param: string, argument: Record<string, unknown>, parent = search) {
  const requests: TaskRequest[] = [
    { agentId: parent.agent.id, operation: parent.operation, params: {} },
    { agentId: child.agent.id, operation: child.operation, params: { [param]: argument }, parents: ['0'] },
  ];
  return outcome(requests, [parent, child]);
}

/** 'accepted', or the refusal's status, code, message and details. */
function outcome(requests: TaskRequest[], tools: ComposedTool[]) {
  try {
    checkTypedArguments(requests, tools);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.status, code: error.code, message: error.message, details: error.details as any };
  }
}

describe('checkTypedArguments', () => {
  it.each([
    ['a top-level field of the same type', { n: { type: 'integer' } }, 'n', from('total')],
    ['integer into number', { n: { type: 'number' } }, 'n', from('total')],
    ['a nested pointer into an array item', { u: { type: 'string' } }, 'u', from('/hits/0/url')],
    ['an array into an array', { list: { type: 'array' } }, 'list', from('hits')],
    ['string or null narrowed to string by the argument type', { t: { type: 'string' } }, 't', from('title', 'string')],
    ['a field in some branch of anyOf', { t: { type: 'string' } }, 't', from('/summary/text')],
    ['a param the inputSchema does not describe', { other: { type: 'string' } }, 'n', from('total')],
    ['a param without type', { n: { description: 'anything' } }, 'n', from('score')],
    ['number narrowed to integer by the argument type', { n: { type: 'integer' } }, 'n', from('score', 'integer')],
  ])('accepts %s', (_what, properties, param, argument) => {
    expect(check(consumer(properties), param, argument)).toBe('accepted');
  });

  it('accepts anything read from a tool without outputSchema, unless the argument type does not fit the param', () => {
    const untyped: ComposedTool = {
      ...search,
      entry: { name: 'search', description: '', inputSchema: { type: 'object' } },
    };
    expect(check(consumer({ n: { type: 'integer' } }), 'n', from('/any/thing'), untyped)).toBe('accepted');
    expect(check(consumer({ n: { type: 'integer' } }), 'n', from('x', 'integer'), untyped)).toBe('accepted');
    const refused = check(consumer({ n: { type: 'integer' } }), 'n', from('x', 'number'), untyped);
    expect(refused).toMatchObject({
      message: expect.stringContaining(
        'but no outputSchema tells its type, the argument\'s type "number" lets number through, and the param takes integer',
      ),
      details: {
        mismatch: 'type',
        argumentType: 'number',
        passedTypes: ['number'],
        paramTypes: ['integer'],
        inputSchemaPointer: '/properties/n',
      },
    });
    expect(refused).not.toHaveProperty('details.fieldTypes');
  });

  it('refuses a field the outputSchema does not have, naming both tasks and the pointer', () => {
    expect(check(consumer({ u: { type: 'string' } }), 'u', from('/hits/0/link'))).toEqual({
      status: 400,
      code: 'INVALID_COMPOSITION',
      message:
        'Task 1 (Consumer: tools/consume): param "u" reads field "/hits/0/link" of task 0 (Search: tools/search), which its outputSchema does not have: ' +
        'at outputSchema#/properties/hits/items, "link" is not among its properties, and additionalProperties is false',
      details: {
        mismatch: 'missing_field',
        task: { index: 1, agentId: 'agent-c', agentName: 'Consumer', operation: 'tools/consume', param: 'u' },
        parent: { index: 0, agentId: 'agent-s', agentName: 'Search', operation: 'tools/search', field: '/hits/0/link' },
        outputSchemaPointer: '/properties/hits/items',
      },
    });
    expect(check(consumer({ u: {} }), 'u', from('missing'))).toMatchObject({
      details: { mismatch: 'missing_field', outputSchemaPointer: '' },
    });
    expect(check(consumer({ u: {} }), 'u', from('/summary/words'))).toMatchObject({
      details: { mismatch: 'missing_field', outputSchemaPointer: '/properties/summary/anyOf' },
    });
  });

  it('refuses a condition on a field the outputSchema does not have, and takes one on a field it has', () => {
    const conditioned = (field: string): TaskRequest[] => [
      { agentId: search.agent.id, operation: search.operation, params: {} },
      {
        agentId: 'agent-c',
        operation: 'tools/consume',
        params: {},
        parents: ['0'],
        when: { source: { taskId: '0', field }, schema: { type: 'integer', minimum: 1 } },
      },
    ];
    const tools = [search, consumer({})];
    expect(() => checkTypedArguments(conditioned('total'), tools)).not.toThrow();
    expect(() => checkTypedArguments(conditioned('/hits/0/rank'), tools)).not.toThrow();
    let refused: ApiError | undefined;
    try {
      checkTypedArguments(conditioned('count'), tools);
    } catch (error) {
      refused = error as ApiError;
    }
    expect(refused).toMatchObject({
      code: 'INVALID_COMPOSITION',
      message: expect.stringContaining(
        'Task 1 (Consumer: tools/consume): its condition (when) reads field "count" of task 0',
      ),
      details: {
        mismatch: 'missing_field',
        task: { index: 1, condition: true },
        parent: { index: 0, field: 'count' },
        outputSchemaPointer: '',
      },
    });
  });

  it('refuses number into integer, not the reverse, with the pointers of both schemas', () => {
    expect(check(consumer({ n: { type: 'integer' } }), 'n', from('score'))).toEqual({
      status: 400,
      code: 'INVALID_COMPOSITION',
      message:
        'Task 1 (Consumer: tools/consume): param "n" reads field "score" of task 0 (Search: tools/search), but its outputSchema gives it number ' +
        '(outputSchema#/properties/score), and the param takes integer (inputSchema#/properties/n)',
      details: {
        mismatch: 'type',
        task: expect.objectContaining({ index: 1, param: 'n' }),
        parent: expect.objectContaining({ index: 0, field: 'score' }),
        fieldTypes: ['number'],
        passedTypes: ['number'],
        paramTypes: ['integer'],
        outputSchemaPointer: '/properties/score',
        inputSchemaPointer: '/properties/n',
      },
    });
  });

  it.each([
    ['an array item into a string', { t: { type: 'string' } }, 't', from('/hits/0'), '/properties/hits/items'],
    ['string or null into string', { t: { type: 'string' } }, 't', from('title'), '/properties/title'],
    [
      'an anyOf of string and object into string',
      { t: { type: 'string' } },
      't',
      from('summary'),
      '/properties/summary/anyOf/1',
    ],
  ])('refuses %s', (_what, properties, param, argument, outputSchemaPointer) => {
    expect(check(consumer(properties), param, argument)).toMatchObject({
      details: { mismatch: 'type', outputSchemaPointer, inputSchemaPointer: `/properties/${param}` },
    });
  });

  it('refuses an argument type the field never has, and one the param does not take', () => {
    expect(check(consumer({ t: { type: 'string' } }), 't', from('total', 'string'))).toMatchObject({
      message: expect.stringContaining(
        'its outputSchema gives it integer (outputSchema#/properties/total), never the argument\'s type "string"',
      ),
      details: {
        mismatch: 'type',
        argumentType: 'string',
        fieldTypes: ['integer'],
        passedTypes: [],
        outputSchemaPointer: '/properties/total',
      },
    });
    expect(check(consumer({ n: { type: 'integer' } }), 'n', from('score', 'number'))).toMatchObject({
      message: expect.stringContaining(
        'the argument\'s type "number" lets number through, and the param takes integer (inputSchema#/properties/n)',
      ),
      details: { mismatch: 'type', argumentType: 'number', passedTypes: ['number'], paramTypes: ['integer'] },
    });
  });

  it('refuses a param the inputSchema excludes', () => {
    expect(
      check(consumer({ n: { type: 'integer' } }, { additionalProperties: false }), 'm', from('total')),
    ).toMatchObject({
      message: expect.stringContaining(
        'but tools/consume takes no such param: at inputSchema#, "m" is not among its properties',
      ),
      details: { mismatch: 'unknown_param', inputSchemaPointer: '' },
    });
  });

  it('reads an outputSchema of another type than object as the result {"0": value}', () => {
    const counter: ComposedTool = { ...search, entry: { ...search.entry, outputSchema: { type: 'integer' } } };
    expect(check(consumer({ n: { type: 'integer' } }), 'n', from('0'), counter)).toBe('accepted');
    expect(check(consumer({ n: { type: 'string' } }), 'n', from('0'), counter)).toMatchObject({
      details: { mismatch: 'type' },
    });
    expect(check(consumer({ n: {} }), 'n', from('count'), counter)).toMatchObject({
      details: { mismatch: 'missing_field', outputSchemaPointer: '' },
    });
  });

  it('takes the outputSchema from annotations when the tool has none of its own', () => {
    const annotated: ComposedTool = {
      ...search,
      entry: {
        name: 'search',
        description: '',
        inputSchema: { type: 'object' },
        annotations: { outputSchema: SEARCH_OUTPUT },
      },
    };
    expect(check(consumer({ n: { type: 'integer' } }), 'n', from('score'), annotated)).toMatchObject({
      details: { mismatch: 'type' },
    });
  });

  describe('of a map', () => {
    const item = (field?: string, type?: string) => ({
      source: { item: true, ...(field === undefined ? {} : { field }) },
      ...(type === undefined ? {} : { type }),
    });
    /** A composition of `parent` and a map over its `field` whose params are `params`. */
    function checkMap(child: ComposedTool, field: string, params: Record<string, unknown>, parent = search) {
      const requests: TaskRequest[] = [
        { agentId: parent.agent.id, operation: parent.operation, params: {} },
        {
          agentId: child.agent.id,
          operation: child.operation,
          params,
          parents: ['0'],
          forEach: { source: { taskId: '0', field } },
        },
      ];
      return outcome(requests, [parent, child]);
    }
    const pages = consumer({ url: { type: 'string' }, rank: { type: 'number' }, hit: { type: 'object' } });

    it.each([
      ['the elements and their fields where the params take them', 'hits', { url: item('url'), hit: item() }],
      ['a JSON Pointer to the array', '/hits', { rank: item('/rank') }],
      ['pending arguments beside item arguments', 'hits', { url: item('url'), rank: from('score') }],
      ['a param filled from an element of a tool without outputSchema', 'anything', { url: item('x', 'string') }],
    ])('accepts %s', (_what, field, params) => {
      const parent = field === 'anything' ? { ...search, entry: { ...search.entry, outputSchema: undefined } } : search;
      expect(checkMap(pages, field, params, parent)).toBe('accepted');
    });

    it('refuses a forEach field that surely is no array, naming both tasks and the pointer', () => {
      expect(checkMap(pages, 'title', {})).toEqual({
        status: 400,
        code: 'INVALID_COMPOSITION',
        message:
          'Task 1 (Consumer: tools/consume): its map (forEach) reads field "title" of task 0 (Search: tools/search), ' +
          'but its outputSchema gives it null or string (outputSchema#/properties/title), not an array',
        details: {
          mismatch: 'type',
          task: { index: 1, agentId: 'agent-c', agentName: 'Consumer', operation: 'tools/consume', forEach: true },
          parent: { index: 0, agentId: 'agent-s', agentName: 'Search', operation: 'tools/search', field: 'title' },
          fieldTypes: ['null', 'string'],
          outputSchemaPointer: '/properties/title',
        },
      });
    });

    it('refuses a forEach field the outputSchema does not have', () => {
      expect(checkMap(pages, 'results', {})).toMatchObject({
        message: expect.stringContaining('its map (forEach) reads field "results" of task 0'),
        details: { mismatch: 'missing_field', task: { forEach: true }, outputSchemaPointer: '' },
      });
    });

    it('refuses an element field the items schema does not have', () => {
      expect(checkMap(pages, 'hits', { url: item('link') })).toEqual({
        status: 400,
        code: 'INVALID_COMPOSITION',
        message:
          'Task 1 (Consumer: tools/consume): param "url" reads field "link" of each element of field "hits" of task 0 (Search: tools/search), ' +
          'which its outputSchema does not have: at outputSchema#/properties/hits/items, "link" is not among its properties, and additionalProperties is false',
        details: {
          mismatch: 'missing_field',
          task: expect.objectContaining({ index: 1, param: 'url', item: true, itemField: 'link' }),
          parent: expect.objectContaining({ index: 0, field: 'hits' }),
          outputSchemaPointer: '/properties/hits/items',
        },
      });
    });

    it.each([
      [
        'an element field of another type than the param',
        { url: item('rank') },
        'param "url" reads field "rank" of each element of field "hits" of task 0 (Search: tools/search), but its outputSchema gives it integer (outputSchema#/properties/hits/items/properties/rank), and the param takes string (inputSchema#/properties/url)',
        { fieldTypes: ['integer'], paramTypes: ['string'], inputSchemaPointer: '/properties/url' },
      ],
      [
        'the element itself where the param takes a string',
        { url: item() },
        'param "url" reads each element of field "hits" of task 0 (Search: tools/search), but its outputSchema gives it object (outputSchema#/properties/hits/items)',
        { fieldTypes: ['object'], outputSchemaPointer: '/properties/hits/items' },
      ],
      [
        'an argument type the element field never has',
        { url: item('url', 'integer') },
        'never the argument\'s type "integer"',
        { argumentType: 'integer', passedTypes: [] },
      ],
    ])('refuses %s', (_what, params, message, details) => {
      expect(checkMap(pages, 'hits', params)).toMatchObject({
        code: 'INVALID_COMPOSITION',
        message: expect.stringContaining(message),
        details: { mismatch: 'type', ...details },
      });
    });

    it('refuses an item argument for a param the inputSchema excludes', () => {
      expect(
        checkMap(consumer({ url: {} }, { additionalProperties: false }), 'hits', { link: item('url') }),
      ).toMatchObject({
        details: { mismatch: 'unknown_param', task: { param: 'link', item: true }, inputSchemaPointer: '' },
      });
    });

    it('reads no element of an array that surely has none', () => {
      const empty: ComposedTool = {
        ...search,
        entry: {
          ...search.entry,
          outputSchema: { type: 'object', properties: { hits: { type: 'array', items: false } } },
        },
      };
      expect(checkMap(pages, 'hits', { url: item('anything') }, empty)).toBe('accepted');
    });
  });
});
