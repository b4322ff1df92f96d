import { TaskStatus } from '../../workflows/task-types';
import type { TaskDocument } from '../tasks/task-document';
import { joinedResult, progressOf } from './map-result';
import { sliceOf } from './map-slices';

const item = (index: number, status: TaskStatus, outcome: { result?: unknown; error?: unknown } = {}) =>
  ({
    _id: `m.${index}`,
    itemIndex: index,
    status,
    ...(outcome.result === undefined ? {} : { result: JSON.stringify(outcome.result) }),
    ...(outcome.error === undefined ? {} : { error: JSON.stringify(outcome.error) }),
  }) as TaskDocument;

describe("a map's result", () => {
  it('joins the slices in element order, whatever order their items were read in, with null and an error for each item that did not complete', () => {
    const first = sliceOf('m', 0, 2, [
      item(2, TaskStatus.COMPLETED, { result: { n: 2 } }),
      item(0, TaskStatus.COMPLETED, { result: { 'a.b': 0 } }),
      item(1, TaskStatus.FAILED, { error: { code: 'AGENT_REJECTED', message: 'no' } }),
    ]);
    const second = sliceOf('m', 3, 4, [
      item(4, TaskStatus.CANCELLED),
      item(3, TaskStatus.COMPLETED, { result: { n: 3 } }),
    ]);

    expect(first.counts).toEqual({ completed: 2, failed: 1, cancelled: 0 });
    expect(JSON.parse(joinedResult([first, second]))).toEqual({
      results: [{ 'a.b': 0 }, null, { n: 2 }, { n: 3 }, null],
      errors: [
        { index: 1, taskId: 'm.1', status: 'failed', error: { code: 'AGENT_REJECTED', message: 'no' } },
        { index: 4, taskId: 'm.4', status: 'cancelled' },
      ],
    });
  });

  it('has no errors when every item completed, and is empty for an empty map', () => {
    const slice = sliceOf('m', 0, 0, [item(0, TaskStatus.COMPLETED, { result: { 0: 'x' } })]);
    expect(JSON.parse(joinedResult([slice]))).toEqual({ results: [{ 0: 'x' }] });
    expect(JSON.parse(joinedResult([]))).toEqual({ results: [] });
  });

  it('tells how many items ended, and how', () => {
    expect(progressOf({ total: 1000, completed: 417, failed: 3, cancelled: 0 })).toEqual({
      progress: 0.42,
      message: '420 of 1000 items ended (3 failed)',
    });
    expect(progressOf({ total: 0, completed: 0, failed: 0, cancelled: 0 })).toEqual({
      progress: 1,
      message: '0 of 0 items ended',
    });
  });
});
