import { createMetrics, errorCodeLabel, statusClassLabel } from './metrics';

describe('createMetrics', () => {
  const labelNames = async (perAgent: boolean) => {
    const metrics = createMetrics({ perAgent });
    metrics.calls.attempts.inc({ operation: 'tools/echo', attempt: 'first', ...metrics.agent('agent-1') });
    metrics.tasks.created.inc({ operation: 'tools/echo', kind: 'task' });
    const [attempts] = (await metrics.calls.attempts.get()).values;
    const [created] = (await metrics.tasks.created.get()).values;
    return { attempts: attempts.labels, created: created.labels };
  };

  it('labels the agent metrics with agent ids only with METRICS_PER_AGENT', async () => {
    expect(await labelNames(false)).toEqual({
      attempts: { operation: 'tools/echo', attempt: 'first' },
      created: { operation: 'tools/echo', kind: 'task' },
    });
    expect(await labelNames(true)).toEqual({
      attempts: { operation: 'tools/echo', attempt: 'first', agent: 'agent-1' },
      created: { operation: 'tools/echo', kind: 'task' },
    });
  });

  it("keeps label values bounded: error codes of its own, agents' codes as OTHER, statuses by class", () => {
    expect(errorCodeLabel(undefined)).toBe('');
    expect(errorCodeLabel({ code: 'AGENT_TIMEOUT', message: 'late' })).toBe('AGENT_TIMEOUT');
    expect(errorCodeLabel({ code: 'OUT_OF_STOCK' })).toBe('OTHER');
    expect(errorCodeLabel('a plain string error')).toBe('OTHER');
    expect(errorCodeLabel(null)).toBe('OTHER');
    expect([200, 202, 404, 503].map(statusClassLabel)).toEqual(['2xx', '2xx', '4xx', '5xx']);
  });
});
