import { ApiError } from '../http/errors';
import { checkCompositionGraph } from './composition-graph';
import type { TaskRequest } from '../../workflows/task-types';

const task = (parents: string[] = [], params: Record<string, unknown> = {}): TaskRequest => ({
  agentId: 'a',
  operation: 'tools/x',
  params,
  parents,
});
const item = (field?: string, type?: string) => ({
  source: { item: true, ...(field === undefined ? {} : { field }) },
  ...(type === undefined ? {} : { type }),
});
const mapOver = (params: Record<string, unknown>): TaskRequest => ({
  ...task(['0'], params),
  forEach: { source: { taskId: '0', field: 'hits' } },
});
const from = (taskId: string, field = '0') => ({ source: { taskId, field }, type: 'string' });

function rejection(requests: TaskRequest[]): { code: string; message: string } {
  try {
    checkCompositionGraph(requests);
  } catch (error) {
    if (error instanceof ApiError) return { code: error.code, message: error.message };
  }
  throw new Error('expected a rejection');
}

describe('checkCompositionGraph', () => {
  it('returns parents as indices for a diamond', () => {
    expect(
      checkCompositionGraph([task(), task(['0']), task(['0']), task(['1', '2', '1'], { a: from('1'), b: from('2') })]),
    ).toEqual([[], [0], [0], [1, 2]]);
  });

  it.each([
    ['an index out of range', [task(), task(['2'])], /Task 1: parent "2" is not an index/],
    ['a non-numeric index', [task(['x'])], /Task 0: parent "x"/],
    ['a padded index', [task(), task(['01'])], /Task 1: parent "01"/],
    ['a self-reference', [task(), task(['1'])], /Task 1: lists itself/],
    ['a cycle', [task(), task(['3']), task(['1']), task(['2'])], /Task 1: .*cycle/],
    [
      'a pending argument off the parents',
      [task(), task(), task(['0'], { a: from('1') })],
      /Task 2: param "a" takes its value from task "1"/,
    ],
    [
      'a condition off the parents',
      [task(), task(), { ...task(['0']), when: { source: { taskId: '1', field: 'ok' }, schema: {} } }],
      /Task 2: its condition \(when\) reads task "1", which is not among its parents/,
    ],
    [
      'a map off the parents',
      [task(), task(), { ...task(['0']), forEach: { source: { taskId: '1', field: 'hits' } } }],
      /Task 2: its forEach reads task "1", which is not among its parents/,
    ],
    [
      'an item argument without forEach',
      [task(), task(['0'], { doc: item() })],
      /Task 1: param "doc" takes its value from an item, but the task has no forEach/,
    ],
    [
      'a condition reading a padded index',
      [task(), { ...task(['0']), when: { source: { taskId: '00', field: 'ok' }, schema: {} } }],
      /Task 1: its condition \(when\) reads task "00"/,
    ],
  ])('refuses %s with INVALID_COMPOSITION', (_what, requests, message) => {
    const { code, message: text } = rejection(requests);
    expect(code).toBe('INVALID_COMPOSITION');
    expect(text).toMatch(message);
  });

  it('refuses an unknown pending-argument type with VALIDATION_ERROR', () => {
    expect(
      rejection([task(), task(['0'], { a: { source: { taskId: '0', field: '0' }, type: 'date' } })]),
    ).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/Task 1: param "a"/) });
  });

  it('accepts a map over a parent, with item and pending arguments, a condition and executeOnParentFailure', () => {
    const map = {
      ...mapOver({ doc: item(), title: item('/meta/title', 'string'), lang: from('0', 'lang'), style: 'short' }),
      when: { source: { taskId: '0', field: 'ok' }, schema: {} },
      executeOnParentFailure: true,
    };
    expect(checkCompositionGraph([task(), map])).toEqual([[], [0]]);
  });

  it.each([
    ['an unknown item-argument type', { doc: item('title', 'date') }, /Task 1: param "doc" has type "date"/],
    ['an empty item field', { doc: item('') }, /Task 1: param "doc" reads an empty field of the item/],
    [
      'a source both pending and item',
      { doc: { source: { item: true, taskId: '0', field: 'x' } } },
      /Task 1: param "doc" is both a pending argument and an item argument/,
    ],
  ])('refuses %s with VALIDATION_ERROR', (_what, params, message) => {
    expect(rejection([task(), mapOver(params)])).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(message),
    });
  });
});
