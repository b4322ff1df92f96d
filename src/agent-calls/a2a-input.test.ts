import { a2aInputMessage, a2aInputRequestOf } from './a2a-input';

const interrupted = (state: string, parts: unknown[], messageId = 'status-1') => ({
  id: 'a2a-1',
  contextId: 'ctx-1',
  status: { state, message: { messageId, parts } },
});

describe('a2aInputRequestOf', () => {
  it('asks with the status text and the inputSchema of a data part, naming the request after the status message', () => {
    const schema = { type: 'object', properties: { colour: { type: 'string' } } };
    const asked = a2aInputRequestOf(
      interrupted('TASK_STATE_INPUT_REQUIRED', [
        { text: 'Which' },
        { text: 'colour?' },
        { data: { inputSchema: schema } },
      ]),
    );
    expect(asked).toEqual({
      a2aTaskId: 'a2a-1',
      contextId: 'ctx-1',
      request: { requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), message: 'Which\ncolour?', inputSchema: schema },
    });
    const again = a2aInputRequestOf(interrupted('TASK_STATE_INPUT_REQUIRED', [{ text: 'Which colour?' }]));
    expect(again?.request.requestId).toBe(asked?.request.requestId);
    const next = a2aInputRequestOf(interrupted('TASK_STATE_INPUT_REQUIRED', [{ text: 'Which colour?' }], 'status-2'));
    expect(next?.request.requestId).not.toBe(asked?.request.requestId);
  });

  it("takes a data part's message without text, says what the state asks without either, and ignores other states", () => {
    expect(
      a2aInputRequestOf(interrupted('TASK_STATE_INPUT_REQUIRED', [{ data: { message: 'Pick one' } }]))?.request,
    ).toMatchObject({ message: 'Pick one' });
    expect(a2aInputRequestOf(interrupted('TASK_STATE_AUTH_REQUIRED', []))?.request).toEqual({
      requestId: expect.any(String),
      message: 'The A2A agent asks for authorisation',
    });
    expect(a2aInputRequestOf(interrupted('TASK_STATE_WORKING', [{ text: 'busy' }]))).toBeUndefined();
  });
});

describe('a2aInputMessage', () => {
  const asked = { a2aTaskId: 'a2a-1', contextId: 'ctx-1', request: { requestId: 'r1', message: 'Which?' } };

  it("answers in the agent's task and context: text as a text part, anything else as a data part", () => {
    expect(a2aInputMessage('t1', asked, 'blue')).toEqual({
      messageId: 't1-input-r1',
      role: 'ROLE_USER',
      taskId: 'a2a-1',
      contextId: 'ctx-1',
      parts: [{ text: 'blue' }],
    });
    expect(a2aInputMessage('t1', asked, { text: 'blue' }).parts).toEqual([{ text: 'blue' }]);
    expect(a2aInputMessage('t1', asked, { colour: 'blue' }).parts).toEqual([
      { data: { colour: 'blue' }, mediaType: 'application/json' },
    ]);
  });
});
