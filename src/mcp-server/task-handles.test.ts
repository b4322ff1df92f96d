import type { TaskDocument } from '../tasks/task-document';
import { endedCallResult, mcpTaskOf } from './task-handles';

const createdAt = new Date('2026-01-02T03:04:05.000Z');
const updatedAt = new Date('2026-01-02T03:05:00.000Z');
const task = (fields: Partial<TaskDocument>): TaskDocument => ({
  _id: 't1',
  agentId: 'a1',
  operation: 'tools/work',
  params: '{}',
  status: 'pending',
  createdBy: { kind: 'service', id: 'k1' },
  createdAt,
  updatedAt,
  ...fields,
});

const skipped = task({
  status: 'skipped',
  skipReason: JSON.stringify({ code: 'CONDITION_NOT_MET', message: 'Field "ok" is false' }),
});

describe('a task of the service as an MCP task', () => {
  it('has its id, times and status in MCP terms, with what the status says as statusMessage', () => {
    expect(mcpTaskOf(task({ message: 'half way' }))).toEqual({
      taskId: 't1',
      status: 'working',
      statusMessage: 'half way',
      createdAt: '2026-01-02T03:04:05.000Z',
      lastUpdatedAt: '2026-01-02T03:05:00.000Z',
      ttl: null,
      pollInterval: 1000,
    });
    const inputRequest = JSON.stringify({ requestId: 'r1', message: 'Which colour?' });
    expect(mcpTaskOf(task({ status: 'input-required', inputRequest }))).toMatchObject({
      status: 'input_required',
      statusMessage: 'Which colour?',
    });
    expect(mcpTaskOf(task({ status: 'completed', result: '{"ok":true}' })).status).toBe('completed');
    expect(mcpTaskOf(task({ status: 'cancelled' })).status).toBe('cancelled');
    const failed = task({ status: 'failed', error: JSON.stringify({ code: 'NO_SUN', message: 'dark' }) });
    expect(mcpTaskOf(failed)).toMatchObject({ status: 'failed', statusMessage: 'NO_SUN: dark' });
    expect(mcpTaskOf(skipped)).toMatchObject({ status: 'cancelled', statusMessage: 'Field "ok" is false' });
  });

  it('answers tasks/result for an ended task as the plain call would have answered', () => {
    expect(endedCallResult(task({ status: 'completed', result: '{"ok":true}' }))).toMatchObject({
      structuredContent: { ok: true },
    });
    expect(
      endedCallResult(task({ status: 'failed', error: JSON.stringify({ code: 'NO_SUN', message: 'dark' }) })),
    ).toMatchObject({ isError: true, content: [{ type: 'text', text: 'NO_SUN: dark' }] });
    expect(endedCallResult(task({ status: 'cancelled' }))).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'CANCELLED: Task t1 was cancelled' }],
    });
    expect(endedCallResult(skipped)).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'SKIPPED: Task t1 was skipped: Field "ok" is false' }],
    });
  });
});
