import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import { parentIn, TRACE_HEADER, WorkflowSpan } from './workflow-span';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const headersWith = (carrier: unknown) => ({ [TRACE_HEADER]: defaultPayloadConverter.toPayload(carrier) });
const carrierOf = (headers: Headers) =>
  defaultPayloadConverter.fromPayload<Record<string, string>>(headers[TRACE_HEADER]);

describe('parentIn', () => {
  it('reads the W3C context, tracestate and baggage the client interceptor wrote', () => {
    const headers = headersWith({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'k=v', baggage: 'a=1' });
    expect(parentIn(headers)).toEqual({
      context: { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, traceState: 'k=v' },
      baggage: 'a=1',
    });
  });

  it.each([
    ['no header', {}],
    ['no traceparent', headersWith({})],
    ['a malformed traceparent', headersWith({ traceparent: `00-${TRACE_ID}-${SPAN_ID}` })],
    ['an all-zero trace id', headersWith({ traceparent: `00-${'0'.repeat(32)}-${SPAN_ID}-01` })],
    ['an all-zero span id', headersWith({ traceparent: `00-${TRACE_ID}-${'0'.repeat(16)}-01` })],
    [
      'a payload that is not JSON',
      { [TRACE_HEADER]: { metadata: { encoding: Buffer.from('binary/custom') }, data: Buffer.from('x') } },
    ],
  ])('finds no parent with %s', (_, headers) => {
    expect(parentIn(headers)).toBeUndefined();
  });
});

describe('WorkflowSpan', () => {
  it("continues its parent's trace under a span id of its own, and hands that on in the headers", () => {
    const parent = parentIn(
      headersWith({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'k=v', baggage: 'a=1' }),
    );
    const span = new WorkflowSpan('StartActivity:callAgent', parent);
    expect(span.context).toMatchObject({ traceId: TRACE_ID, traceFlags: 1, traceState: 'k=v' });
    expect(span.context.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span.context.spanId).not.toBe(SPAN_ID);
    const headers = span.headers({ other: defaultPayloadConverter.toPayload('kept') });
    expect(carrierOf(headers)).toEqual({
      traceparent: `00-${TRACE_ID}-${span.context.spanId}-01`,
      tracestate: 'k=v',
      baggage: 'a=1',
    });
    expect(defaultPayloadConverter.fromPayload(headers.other)).toBe('kept');
  });

  it('stays unsampled under an unsampled parent, and starts a sampled trace without one', () => {
    const unsampled = new WorkflowSpan(
      'RunWorkflow:w',
      parentIn(headersWith({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-00` })),
    );
    expect(carrierOf(unsampled.headers({})).traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`));
    const root = new WorkflowSpan('RunWorkflow:w', undefined);
    expect(root.context.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.context.traceFlags).toBe(1);
  });

  it('ends with the work, passing on its result or its error', async () => {
    // Unsampled: ending exports nothing, so no sink is needed outside a workflow.
    const parent = parentIn(headersWith({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-00` }));
    await expect(new WorkflowSpan('s', parent).around(async () => 'done')).resolves.toBe('done');
    await expect(new WorkflowSpan('s', parent).around(() => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(new WorkflowSpan('s', parent).aroundSync(() => 7)).toBe(7);
  });
});
