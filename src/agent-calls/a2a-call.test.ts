import { A2aHttpError, A2aProtocolError, A2aRpcError } from './a2a-client';
import { ReplyTooLarge } from './guarded-fetch';
import { resultOfParts, verdictOfA2aError, verdictOfTask } from './a2a-call';

const task = (state: string, extra: Record<string, unknown> = {}) => ({ id: 'a2a-1', status: { state }, ...extra });
const said = (text: string) => ({ message: { parts: [{ text }] } });

describe('verdictOfTask', () => {
  it('follows a submitted or working task by its id', () => {
    for (const state of ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'])
      expect(verdictOfTask(task(state))).toEqual({ kind: 'a2aTask', handle: { a2aTaskId: 'a2a-1' } });
  });

  it("completes with the artifacts' parts: one artifact's as they are, several by name, none as the status message's", () => {
    const artifact = (name: string, data: unknown) => ({ name, parts: [{ data }] });
    expect(verdictOfTask(task('TASK_STATE_COMPLETED', { artifacts: [artifact('a', { n: 1 })] }))).toEqual({
      kind: 'completed',
      result: { n: 1 },
    });
    expect(
      verdictOfTask(task('TASK_STATE_COMPLETED', { artifacts: [artifact('a', { n: 1 }), artifact('b', 'two')] })),
    ).toEqual({
      kind: 'completed',
      result: {
        artifacts: [
          { name: 'a', result: { n: 1 } },
          { name: 'b', result: { 0: 'two' } },
        ],
      },
    });
  });

  it('fails a failed, cancelled or rejected task with its status text, and the state in details', () => {
    expect(
      verdictOfTask({ ...task('TASK_STATE_FAILED'), status: { state: 'TASK_STATE_FAILED', ...said('no') } }),
    ).toEqual({
      kind: 'failed',
      error: { code: 'AGENT_TOOL_ERROR', message: 'no', details: { state: 'TASK_STATE_FAILED' } },
    });
    expect(verdictOfTask(task('TASK_STATE_CANCELED'))).toMatchObject({ error: { code: 'AGENT_TOOL_ERROR' } });
    expect(verdictOfTask(task('TASK_STATE_REJECTED'))).toMatchObject({ error: { code: 'AGENT_REJECTED' } });
  });

  it('follows a task that waits for input or authorisation: its polls relay the request', () => {
    for (const state of ['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED'])
      expect(verdictOfTask({ ...task('x'), status: { state, ...said('Which one?') } })).toEqual({
        kind: 'a2aTask',
        handle: { a2aTaskId: 'a2a-1' },
      });
  });

  it('refuses a task outside the protocol: no id, no state, an unknown state', () => {
    for (const answer of [{ status: { state: 'TASK_STATE_WORKING' } }, { id: 'x' }, task('TASK_STATE_NAPPING')])
      expect(verdictOfTask(answer)).toMatchObject({ kind: 'refused', error: { code: 'AGENT_PROTOCOL_ERROR' } });
  });
});

describe('resultOfParts', () => {
  it('takes one data part as the result, text parts alone as {text}, anything else as {parts}', () => {
    expect(resultOfParts([{ data: { a: 1 } }])).toEqual({ a: 1 });
    expect(resultOfParts([{ data: [1, 2] }])).toEqual({ 0: [1, 2] });
    expect(resultOfParts([{ text: 'one' }, { text: 'two' }])).toEqual({ text: 'one\ntwo' });
    const mixed = [{ text: 'see' }, { url: 'https://files.example/a.png', mediaType: 'image/png' }];
    expect(resultOfParts(mixed)).toEqual({ parts: mixed });
    expect(resultOfParts(undefined)).toEqual({ parts: [] });
  });
});

describe('verdictOfA2aError', () => {
  it('retries HTTP 408, 429 and 5xx, and refuses other statuses, 3xx included, for good', () => {
    for (const status of [408, 429, 500, 503])
      expect(verdictOfA2aError(new A2aHttpError(status, ''))).toMatchObject({ kind: 'retry' });
    for (const status of [307, 400, 401, 404])
      expect(verdictOfA2aError(new A2aHttpError(status, 'nope'))).toMatchObject({
        kind: 'refused',
        error: { code: 'AGENT_REJECTED', details: { status } },
      });
  });

  it("refuses JSON-RPC's request errors and A2A's own codes for good, and retries the others", () => {
    for (const code of [-32700, -32600, -32601, -32602, -32001, -32004, -32009])
      expect(verdictOfA2aError(new A2aRpcError(code, 'no', { why: 1 }))).toMatchObject({
        kind: 'refused',
        error: { code: 'AGENT_REJECTED', details: { code, data: { why: 1 } } },
      });
    for (const code of [-32603, -32000, 1])
      expect(verdictOfA2aError(new A2aRpcError(code, 'busy'))).toMatchObject({ kind: 'retry' });
  });

  it('refuses an answer outside the protocol or too large, and throws anything else on', () => {
    expect(verdictOfA2aError(new A2aProtocolError('not JSON'))).toMatchObject({
      error: { code: 'AGENT_PROTOCOL_ERROR' },
    });
    expect(verdictOfA2aError(new TypeError('fetch failed', { cause: new ReplyTooLarge(10) }))).toMatchObject({
      error: { code: 'AGENT_PROTOCOL_ERROR', message: expect.stringMatching(/longer than 10 bytes/) },
    });
    const network = new TypeError('fetch failed');
    expect(() => verdictOfA2aError(network)).toThrow(network);
  });
});
