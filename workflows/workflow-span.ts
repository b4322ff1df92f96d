// A workflow's spans, recorded in the sandbox as plain data and ended into the worker's span processor
// through the `exporter` sink of @temporalio/interceptors-opentelemetry (makeWorkflowExporter). They
// carry the names, parents and statuses that package's workflow interceptors give theirs, without
// loading the OpenTelemetry SDK into every workflow or an AsyncLocalStorage per workflow, each of which
// tags every promise of the workflow thread (temporalio/sdk-typescript#1432). Ids come from the
// workflow's seeded Math.random and times from its clock, so a replay rebuilds the same spans; sinks do
// not run during replay, so a span is exported once.
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { defaultPayloadConverter, proxySinks, type Headers, type Sinks } from '@temporalio/workflow';

/** The header Temporal's OpenTelemetry interceptors carry a trace context in, client and activities alike. */
export const TRACE_HEADER = '_tracer-data';

/** What the header holds: the W3C propagators' fields. */
interface Carrier {
  traceparent?: string;
  tracestate?: string;
  baggage?: string;
}

/** OpenTelemetry's SpanStatusCode. */
const enum StatusCode {
  UNSET = 0,
  OK = 1,
  ERROR = 2,
}

/** Sampled, in W3C trace flags. */
const SAMPLED = 1;

/** OpenTelemetry's HrTime: seconds and nanoseconds. */
type HrTime = [number, number];

interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: string;
}

/** The serialisable span makeWorkflowExporter turns into a ReadableSpan. */
interface ExportedSpan {
  name: string;
  kind: number;
  spanContext: SpanContext;
  parentSpanId?: string;
  startTime: HrTime;
  endTime: HrTime;
  duration: HrTime;
  status: { code: StatusCode; message?: string };
  attributes: Record<string, string>;
  links: [];
  events: Array<{ name: string; time: HrTime; attributes: Record<string, string>; droppedAttributesCount: 0 }>;
  ended: true;
  droppedAttributesCount: 0;
  droppedEventsCount: 0;
  droppedLinksCount: 0;
  instrumentationLibrary: { name: string };
}

interface SpanSinks extends Sinks {
  exporter: { export(spans: ExportedSpan[]): void };
}

const { exporter } = proxySinks<SpanSinks>();

/** The parent of a span: a span of this workflow, or the context a header brought. */
export interface TraceParent {
  context: SpanContext;
  baggage?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The trace context of `headers`, as the W3C propagators read it; undefined without a valid one. */
export function parentIn(headers: Headers): TraceParent | undefined {
  const carrier = carrierIn(headers);
  const match = TRACEPARENT.exec(carrier?.traceparent ?? '');
  if (!carrier || !match || /^0+$/.test(match[1]) || /^0+$/.test(match[2])) return undefined;
  return {
    context: {
      traceId: match[1],
      spanId: match[2],
      traceFlags: parseInt(match[3], 16),
      traceState: carrier.tracestate,
    },
    baggage: carrier.baggage,
  };
}

function carrierIn(headers: Headers): Carrier | undefined {
  const payload = headers[TRACE_HEADER];
  if (payload === undefined) return undefined;
  try {
    return defaultPayloadConverter.fromPayload<Carrier | null>(payload) ?? undefined;
  } catch {
    // A header some other client wrote starts a trace of its own rather than fail the workflow task.
    return undefined;
  }
}

/** `bytes` random bytes in hex, never all zero (an invalid id). */
function randomId(bytes: number): string {
  for (;;) {
    let id = '';
    for (let index = 0; index < bytes * 2; index++) id += Math.floor(Math.random() * 16).toString(16);
    if (!/^0+$/.test(id)) return id;
  }
}

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];

/** One span of the workflow; ended once, exported then if its trace is sampled. */
export class WorkflowSpan implements TraceParent {
  readonly context: SpanContext;
  readonly baggage?: string;
  private readonly startMs = Date.now();
  private readonly attributes: Record<string, string> = {};
  private readonly events: ExportedSpan['events'] = [];
  private status: ExportedSpan['status'] = { code: StatusCode.UNSET };

  constructor(
    readonly name: string,
    private readonly parent: TraceParent | undefined,
  ) {
    // Sampled as its parent is (the SDK's default parentbased_always_on), a root always.
    const traceFlags = parent ? parent.context.traceFlags & SAMPLED : SAMPLED;
    this.context = {
      traceId: parent?.context.traceId ?? randomId(16),
      spanId: randomId(8),
      traceFlags,
      ...(parent?.context.traceState === undefined ? {} : { traceState: parent.context.traceState }),
    };
    this.baggage = parent?.baggage;
  }

  setAttribute(key: string, value: string): void {
    this.attributes[key] = value;
  }

  /** `headers` with this span's context in the trace header, for the command that continues the trace. */
  headers(headers: Headers): Headers {
    const { traceId, spanId, traceFlags, traceState } = this.context;
    const carrier: Carrier = {
      traceparent: `00-${traceId}-${spanId}-0${traceFlags.toString(16)}`,
      ...(traceState === undefined ? {} : { tracestate: traceState }),
      ...(this.baggage === undefined ? {} : { baggage: this.baggage }),
    };
    return { ...headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload(carrier) };
  }

  /** Runs `work` in this span, which ends with it: OK, or the error as the OpenTelemetry interceptors record it. */
  async around<T>(work: () => Promise<T>, acceptable?: (error: unknown) => boolean): Promise<T> {
    try {
      const result = await work();
      this.status = { code: StatusCode.OK };
      return result;
    } catch (error) {
      this.failed(error, acceptable);
      throw error;
    } finally {
      this.end();
    }
  }

  /** `around` for work that does not wait. */
  aroundSync<T>(work: () => T): T {
    try {
      const result = work();
      this.status = { code: StatusCode.OK };
      return result;
    } catch (error) {
      this.failed(error);
      throw error;
    } finally {
      this.end();
    }
  }

  private failed(error: unknown, acceptable?: (error: unknown) => boolean): void {
    if (acceptable?.(error)) {
      this.status = { code: StatusCode.OK };
      return;
    }
    const benign = error instanceof ApplicationFailure && error.category === ApplicationFailureCategory.BENIGN;
    const message =
      typeof (error as Error | undefined)?.message === 'string' ? (error as Error).message : String(error);
    this.status = { code: benign ? StatusCode.UNSET : StatusCode.ERROR, message };
    const attributes: Record<string, string> = { 'exception.message': message };
    if (error instanceof Error) {
      attributes['exception.type'] = error.name;
      if (error.stack) attributes['exception.stacktrace'] = error.stack;
    }
    this.events.push({ name: 'exception', time: hrTime(Date.now()), attributes, droppedAttributesCount: 0 });
  }

  private end(): void {
    if (!(this.context.traceFlags & SAMPLED)) return;
    const endMs = Date.now();
    exporter.export([
      {
        name: this.name,
        kind: 0,
        spanContext: this.context,
        ...(this.parent ? { parentSpanId: this.parent.context.spanId } : {}),
        startTime: hrTime(this.startMs),
        endTime: hrTime(endMs),
        duration: hrTime(endMs - this.startMs),
        status: this.status,
        attributes: this.attributes,
        links: [],
        events: this.events,
        ended: true,
        droppedAttributesCount: 0,
        droppedEventsCount: 0,
        droppedLinksCount: 0,
        instrumentationLibrary: { name: '@temporalio/interceptor-workflow' },
      },
    ]);
  }
}
