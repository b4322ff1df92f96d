import type { TaskDocument } from '../tasks/task-document';
import { TaskStatus } from '../../workflows/task-types';
import { MapSourceError, MapSources } from './map-source';

/** A task store of one task `t`, counting its full reads. */
function storeOf(task: Partial<TaskDocument>) {
  const document = { _id: 't', status: TaskStatus.COMPLETED, updatedAt: new Date(1), ...task } as TaskDocument;
  const reads = { full: 0 };
  return {
    reads,
    document,
    store: {
      find: async () => {
        reads.full += 1;
        return document;
      },
      findUpdatedAt: async () => document.updatedAt,
    },
  };
}

const errorOf = async (read: Promise<unknown>) => {
  try {
    await read;
  } catch (error) {
    if (error instanceof MapSourceError) return error.error;
    throw error;
  }
  throw new Error('read did not fail');
};

describe('MapSources', () => {
  it("reads the array at a field or a JSON Pointer of the task's result, parsed once until the task changes", async () => {
    const { store, reads, document } = storeOf({ result: JSON.stringify({ hits: [1, 2], deep: { list: ['a'] } }) });
    const sources = new MapSources(store);

    expect(await sources.read('t', 'hits')).toEqual([1, 2]);
    expect(await sources.read('t', 'hits')).toEqual([1, 2]);
    expect(await sources.read('t', '/deep/list')).toEqual(['a']);
    expect(reads.full).toBe(2);

    document.updatedAt = new Date(2);
    document.result = JSON.stringify({ hits: [3] });
    expect(await sources.read('t', 'hits')).toEqual([3]);
  });

  it('fails MISSING_FIELD without the field, TYPE_MISMATCH when it is no array or its task did not complete', async () => {
    const result = JSON.stringify({ hits: 'text' });
    expect(await errorOf(new MapSources(storeOf({ result }).store).read('t', 'other'))).toMatchObject({
      code: 'MISSING_FIELD',
    });
    expect(await errorOf(new MapSources(storeOf({ status: TaskStatus.FAILED }).store).read('t', 'hits'))).toMatchObject(
      { code: 'TYPE_MISMATCH', details: { expected: 'array', actual: 'null' } },
    );
    expect(await errorOf(new MapSources(storeOf({ result }).store).read('t', 'hits'))).toEqual({
      code: 'TYPE_MISMATCH',
      message: 'forEach reads field "hits" of task t, which is not an array',
      details: { expected: 'array', actual: 'string' },
    });
  });
});
