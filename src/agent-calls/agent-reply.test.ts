import { interpretAgentReply } from './agent-reply';

const json = (value: unknown) => JSON.stringify(value);

describe('interpretAgentReply', () => {
  it.each([
    [200, json({ status: 'completed', result: { a: 1 } }), { kind: 'completed', result: { a: 1 } }],
    [201, json({ status: 'completed', result: 'text' }), { kind: 'completed', result: { 0: 'text' } }],
    [200, json({ status: 'completed', result: [1, 2] }), { kind: 'completed', result: { 0: [1, 2] } }],
    [
      200,
      json({ status: 'failed', error: { code: 'X', message: 'm' } }),
      { kind: 'failed', error: { code: 'X', message: 'm' } },
    ],
    [
      400,
      json({ status: 'failed', error: { code: 'VALIDATION_ERROR', message: 'bad' } }),
      { kind: 'failed', error: { code: 'VALIDATION_ERROR', message: 'bad' } },
    ],
    [200, json({ status: 'failed', error: 'disk full' }), { kind: 'failed', error: 'disk full' }],
    [422, json({ status: 'failed', error: ['a', 'b'] }), { kind: 'failed', error: ['a', 'b'] }],
    [202, json({ status: 'received' }), { kind: 'accepted' }],
    [202, json({ status: 'executing', message: 'on it' }), { kind: 'accepted' }],
  ])('HTTP %i %s', (status, body, verdict) => {
    expect(interpretAgentReply(status, body)).toEqual(verdict);
  });

  it.each([408, 429, 500, 503])('retries HTTP %i, even with a failed body', (status) => {
    expect(interpretAgentReply(status, json({ status: 'failed', error: { message: 'busy' } })).kind).toBe('retry');
  });

  it('names the status and the start of the body of a retried reply, on one line, as the Web UI shows its last failure', () => {
    expect(interpretAgentReply(503, 'database\n  is down')).toEqual({
      kind: 'retry',
      reason: 'agent answered HTTP 503: database is down',
    });
    expect(interpretAgentReply(500, '')).toEqual({ kind: 'retry', reason: 'agent answered HTTP 500' });
    const reason = (interpretAgentReply(502, 'x'.repeat(5000)) as { reason: string }).reason;
    expect(reason).toBe(`agent answered HTTP 502: ${'x'.repeat(199)}…`);
  });

  it.each([400, 404, 422])('refuses HTTP %i without an error body as AGENT_REJECTED', (status) => {
    expect(interpretAgentReply(status, 'nope')).toMatchObject({ kind: 'refused', error: { code: 'AGENT_REJECTED' } });
  });

  it.each([
    [200, 'not json'],
    [200, json({ status: 'completed' })],
    [202, json({ status: 'done' })],
    [204, ''],
    [302, ''],
    [200, json([1])],
    [200, json({ status: 'failed', error: null })],
  ])('calls HTTP %i %s a protocol error', (status, body) => {
    expect(interpretAgentReply(status, body)).toMatchObject({
      kind: 'refused',
      error: { code: 'AGENT_PROTOCOL_ERROR' },
    });
  });

  describe('a body longer than the service reads (null)', () => {
    it('is a protocol error on a 2xx', () => {
      expect(interpretAgentReply(200, null)).toEqual({
        kind: 'refused',
        error: {
          code: 'AGENT_PROTOCOL_ERROR',
          message: 'Agent answered HTTP 200 with a body longer than MAX_BODY_BYTES',
          details: '(longer than MAX_BODY_BYTES: not read)',
        },
      });
    });

    it('leaves a retried or rejected status as it is', () => {
      expect(interpretAgentReply(503, null).kind).toBe('retry');
      expect(interpretAgentReply(404, null)).toMatchObject({ kind: 'refused', error: { code: 'AGENT_REJECTED' } });
    });
  });

  describe('JSON nested deeper than MAX_JSON_DEPTH', () => {
    const deepResult = `{"status":"completed","result":${'['.repeat(5000)}${']'.repeat(5000)}}`;

    it('is a protocol error on a 2xx, with only the start of the body as details', () => {
      expect(interpretAgentReply(200, deepResult)).toEqual({
        kind: 'refused',
        error: {
          code: 'AGENT_PROTOCOL_ERROR',
          message: 'Agent answered HTTP 200 with JSON nested deeper than 100 levels',
          details: deepResult.slice(0, 1024),
        },
      });
    });

    it('keeps a rejected status, with a storable details', () => {
      const verdict = interpretAgentReply(422, deepResult);
      expect(verdict).toMatchObject({
        kind: 'refused',
        error: { code: 'AGENT_REJECTED', details: deepResult.slice(0, 1024) },
      });
      expect(() => JSON.stringify(verdict)).not.toThrow();
    });

    it('accepts 100 levels', () => {
      const result = JSON.parse(`${'['.repeat(98)}${']'.repeat(98)}`);
      expect(interpretAgentReply(200, json({ status: 'completed', result }))).toMatchObject({ kind: 'completed' });
    });
  });
});
