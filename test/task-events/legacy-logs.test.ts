import { randomUUID } from 'node:crypto';
import { taskEventLogs } from '../../src/migrations/task-event-logs';
import { Store } from '../../src/store/mongo';
import { useTestDatabase } from '../support/database';
import { EventStreamReader } from '../support/event-stream';
import { testStack } from '../support/test-stack';

const database = useTestDatabase();

/** A task as versions before event logs stored it: no counter, no endSeq. */
const legacyTask = (status: string, extra: Record<string, unknown> = {}) => {
  const now = new Date();
  return {
    _id: randomUUID(),
    agentId: 'legacy-agent',
    operation: 'tools/echo',
    params: '{}',
    status,
    ...(status === 'completed' ? { result: '{"old":true}', attempts: 1 } : {}),
    createdBy: { kind: 'admin', id: 'admin' },
    createdAt: now,
    updatedAt: now,
    ...extra,
  };
};

describe('the task-event-logs migration', () => {
  it('gives tasks and compositions stored before event logs their counters and ends, so their streams replay and close', async () => {
    const db = database();
    const single = legacyTask('completed');
    const compositionId = randomUUID();
    const parts = [
      legacyTask('completed', { compositionId, index: 0 }),
      legacyTask('failed', { compositionId, index: 1, error: '{"code":"X"}' }),
    ];
    await db.collection('tasks').insertMany([single, ...parts] as never[]);
    await db.collection('compositions').insertOne({
      _id: compositionId,
      taskIds: parts.map((task) => task._id),
      createdBy: { kind: 'admin', id: 'admin' },
      createdAt: new Date(),
    } as never);

    const store = await Store.connect(testStack().mongoUri, testStack().mongoDatabase);
    try {
      expect(await taskEventLogs.run(store)).toBeGreaterThanOrEqual(2);
      expect(await taskEventLogs.run(store)).toBe(0);
    } finally {
      await store.close();
    }
    expect(await db.collection('tasks').findOne({ _id: parts[1]._id as never })).toMatchObject({ endSeq: 4 });
    expect(await db.collection('compositions').findOne({ _id: compositionId as never })).toMatchObject({ eventSeq: 4 });

    const ownStream = await EventStreamReader.open(`/tasks/${single._id}/events`);
    await ownStream.closed;
    expect(ownStream.data.map((event) => [event.seq, event.type])).toEqual([
      [1, 'created'],
      [2, 'completed'],
    ]);
    expect(ownStream.data[1]).toMatchObject({ result: { old: true } });

    const compositionStream = await EventStreamReader.open(`/compositions/${compositionId}/events`);
    await compositionStream.closed;
    expect(compositionStream.ids).toEqual([
      `${parts[0]._id}:1`,
      `${parts[1]._id}:2`,
      `${parts[0]._id}:3`,
      `${parts[1]._id}:4`,
    ]);
    expect(compositionStream.data.map((event) => event.type)).toEqual(['created', 'created', 'completed', 'failed']);
  });
});
