// Loaded into the workflow bundle only when tracing is on (src/service/task-worker.ts). The spans of
// Temporal's OpenTelemetry workflow interceptors, by the same names and parents: RunWorkflow under the
// client's StartWorkflow, a HandleSignal/HandleUpdate/ValidateUpdate/HandleQuery under its sender's span,
// and a StartActivity (or StartChildWorkflow, SignalWorkflow, ContinueAsNew) under the span that issued
// it, whose context the command's headers carry to the activity's RunActivity. Every `next` is called at
// once and no command is added, so runs started with tracing off replay with it on, and back.
import {
  ContinueAsNew,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type GetLogAttributesInput,
  type Headers,
  type LocalActivityInput,
  type Next,
  type QueryInput,
  type SignalInput,
  type SignalWorkflowInput,
  type StartChildWorkflowExecutionInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { parentIn, WorkflowSpan } from './workflow-span';

/**
 * The spans of one workflow run. Module state is the run's own (each run gets fresh modules). A
 * handler's span is the parent of what the handler issues while it runs; otherwise the run's.
 */
class WorkflowTrace {
  private run?: WorkflowSpan;
  private handler?: WorkflowSpan;

  /** The span a command issued now belongs to. */
  get current(): WorkflowSpan | undefined {
    return this.handler ?? this.run;
  }

  startRun(input: WorkflowExecuteInput): WorkflowSpan {
    this.run = new WorkflowSpan(`RunWorkflow:${workflowInfo().workflowType}`, parentIn(input.headers));
    return this.run;
  }

  /** Runs a signal or update handler in `span`, the parent of the commands it issues before it first waits. */
  handling<T>(span: WorkflowSpan, handle: () => Promise<T>): Promise<T> {
    return span.around(() => {
      const outer = this.handler;
      this.handler = span;
      try {
        return handle();
      } finally {
        this.handler = outer;
      }
    });
  }

  /** A span for a command, under the current span; its context goes in the command's headers. */
  command<I extends { headers: Headers }, T>(
    name: string,
    input: I,
    next: (input: I) => Promise<T>,
    acceptable?: (error: unknown) => boolean,
  ): Promise<T> {
    const span = new WorkflowSpan(name, this.current);
    return span.around(() => next({ ...input, headers: span.headers(input.headers) }), acceptable);
  }
}

const trace = new WorkflowTrace();

const isContinueAsNew = (error: unknown) => error instanceof ContinueAsNew;

class TracingInbound implements WorkflowInboundCallsInterceptor {
  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    return trace.startRun(input).around(() => next(input), isContinueAsNew);
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    const span = new WorkflowSpan(`HandleSignal:${input.signalName}`, parentIn(input.headers));
    return trace.handling(span, () => next(input));
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    const span = new WorkflowSpan(`HandleUpdate:${input.name}`, parentIn(input.headers));
    span.setAttribute('temporalUpdateId', input.updateId);
    return trace.handling(span, () => next(input));
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    const span = new WorkflowSpan(`ValidateUpdate:${input.name}`, parentIn(input.headers));
    span.setAttribute('temporalUpdateId', input.updateId);
    span.aroundSync(() => next(input));
  }

  handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>): Promise<unknown> {
    return new WorkflowSpan(`HandleQuery:${input.queryName}`, parentIn(input.headers)).around(() => next(input));
  }
}

class TracingOutbound implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return trace.command(`StartActivity:${input.activityType}`, input, next);
  }

  scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ) {
    return trace.command(`StartActivity:${input.activityType}`, input, next);
  }

  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ) {
    return trace.command(`StartChildWorkflow:${input.workflowType}`, input, next);
  }

  signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) {
    return trace.command(`SignalWorkflow:${input.signalName}`, input, next);
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    return trace.command(`ContinueAsNew:${input.options.workflowType}`, input, next, isContinueAsNew);
  }

  /** Workflow log lines name the span they were written in, as the activities' do. */
  getLogAttributes(
    input: GetLogAttributesInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>,
  ): Record<string, unknown> {
    const context = trace.current?.context;
    if (!context) return next(input);
    return next({
      trace_id: context.traceId,
      span_id: context.spanId,
      trace_flags: `0${context.traceFlags.toString(16)}`,
      ...input,
    });
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new TracingInbound()],
  outbound: [new TracingOutbound()],
});
