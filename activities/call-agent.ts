import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Dispatcher } from 'undici';
import { callOverAcs } from '../src/agent-calls/acs-call';
import type { RecentAgents } from '../src/registry/recent-agents';
import { AgentProtocol, type Agent } from '../src/registry/agent';
import type { AgentReplyVerdict } from '../src/agent-calls/agent-reply';
import { findOperation } from '../src/tasks/operations';
import { toTaskView } from '../src/tasks/task-views';
import { refOf, type TaskChange, type TaskDocument } from '../src/tasks/task-document';
import type { TaskClaims } from '../src/tasks/task-claims';
import type { TaskStore } from '../src/tasks/task-store';
import { TaskEventType, type TaskRef } from '../src/task-events/task-event';
import { isLive, TaskErrorCode, TaskPhase, TaskStatus, type TaskError, type TaskResult } from '../workflows/task-types';
import type { AgentAnswer, CallAgentInput, CallAgentResult } from '../workflows/activity-contract';
import type { McpSessionPool } from '../src/agent-calls/mcp-session-pool';
import { callOverMcp, type McpCallVerdict } from '../src/agent-calls/mcp-call';
import { callOverA2a, type A2aCallVerdict } from '../src/agent-calls/a2a-call';
import { a2aPushConfig, type A2aPushSettings } from '../src/agent-calls/a2a-push';
import { ProgressWrites } from './mcp-progress';
import { TaskElicitation } from './mcp-elicitation';
import type { SchemaChecks } from '../src/user-schemas/schema-checks';
import { withElicitation } from '../src/agent-calls/mcp-elicitation';
import { refusalOf } from './call-failures';
import { callOnBehalfOf } from '../src/agent-calls/task-lineage';
import { parentTaskOf } from '../src/tasks/task-lineage';
import { describeError } from '../src/ops/describe-error';
import { errorCodeLabel, statusClassLabel, type Metrics } from '../src/ops/metrics';
import { withoutCredentials } from '../src/util/url-credentials';

/**
 * How often a call heartbeats while it waits for the agent. A heartbeat is how a regular activity
 * hears of a cancellation, and how Temporal knows its worker still runs it; a call shorter than this
 * sends none.
 */
export const CALL_HEARTBEAT_MS = 1_000;

export interface CallAgentSettings {
  callTimeoutMs: number;
  /** Largest reply body read from an agent. */
  maxReplyBytes: number;
  /** Set: A2A agents whose card offers push notifications are asked to push their tasks' updates. */
  a2aPush?: A2aPushSettings;
}

/** The outcome label of a call given up because its task was cancelled or reported on. */
const CALL_ABANDONED = 'ABANDONED';

const abandoned = (agent: Agent) =>
  new CancelledFailure(
    `Call to ${withoutCredentials(agent.endpointUrl)} abandoned: the task was cancelled or reported on`,
  );

/** An operation the agent does not offer over its protocol: refused before any request. */
const operationRefused = ({ code, message }: { code: string; message: string }): CallVerdict => ({
  kind: 'refused',
  error: { code, message },
});

/** What one call's reply means, whichever protocol carried it. */
type CallVerdict = McpCallVerdict | A2aCallVerdict | AgentReplyVerdict;

/**
 * A call's outcome as a metric label: the HTTP status class of the agent's reply, or the error code
 * of a call that got none. An MCP server's JSON-RPC answer counts as 2xx; its HTTP refusals carry
 * their status.
 */
function callOutcome({ verdict, status }: { verdict: CallVerdict; status?: number }): string {
  if (status !== undefined) return statusClassLabel(status);
  if (verdict.kind === 'retry') return TaskErrorCode.AGENT_UNREACHABLE;
  if (verdict.kind !== 'refused') return statusClassLabel(200);
  const refusedWith = (verdict.error.details as { status?: unknown } | undefined)?.status;
  return typeof refusedWith === 'number' ? statusClassLabel(refusedWith) : errorCodeLabel(verdict.error);
}

/**
 * One call per attempt: a signed `POST mcpUrl` for an `acs` agent, an MCP request (mcp-call.ts) for
 * an `mcp` one, an A2A SendMessage (a2a-call.ts) for an `a2a` one. Retryable trouble (network,
 * timeout, 408, 429, 5xx) is thrown as a retryable failure so Temporal's retry policy spaces the
 * attempts, and its message is what the Web UI shows as the last failure; 400/404/422 and replies
 * outside the protocol are thrown non-retryable, with the task error as details, and so is a call
 * the outbound guard refused (AGENT_URL_REFUSED). A cancellation of the task aborts the call. Runs
 * started before the call became a regular activity still run it as a local one. MCP calls go on in
 * the worker's kept `sessions`.
 */
export function callAgentActivity(
  agents: RecentAgents,
  taskStore: TaskStore,
  claims: TaskClaims,
  schemas: SchemaChecks,
  dispatcher: Dispatcher,
  sessions: McpSessionPool,
  settings: CallAgentSettings,
  metrics: Metrics,
) {
  return async function callAgent({
    taskId,
    agentId,
    operation,
    params: givenParams,
    maxAttempts,
    keepsResult = false,
    firstRun = false,
    paramsFromStore = false,
    setsCallingPhase = false,
  }: CallAgentInput): Promise<CallAgentResult> {
    const context = Context.current();
    const { isLocal, attempt: temporalAttempt } = context.info;
    const agent = await agents.findById(agentId);
    if (!agent)
      throw ApplicationFailure.nonRetryable(`Agent ${agentId} no longer exists`, TaskErrorCode.AGENT_NOT_FOUND);
    // Every call counts itself in the task store, which also hands out the seq of its started event,
    // and looks there first: an earlier call's answer (of a worker that died before Temporal heard
    // it, or of the run before a Reset) ended the task.
    const before = await taskStore.startCall(taskId, { callingPhase: setsCallingPhase });
    if (!before || !isLive(before.status)) return withoutStoredOutcome(answerRecordedEarlier(before), keepsResult);
    const task = refOf(before);
    const params = paramsFromStore ? (JSON.parse(before.params) as Record<string, unknown>) : givenParams;
    // A local activity of a crashed worker starts again at Temporal's attempt 1, and so does the
    // call of a run a Reset started: the task store's counts keep numbering the calls, and hold the
    // task to its maxAttempts. The first call of a first run has no earlier one to count.
    const attempt =
      isLocal || temporalAttempt > 1 || !firstRun
        ? Math.max(isLocal ? 1 : temporalAttempt, (before.callsStarted ?? 0) + 1, (before.attempts ?? 0) + 1)
        : 1;
    if (attempt > maxAttempts) {
      throw ApplicationFailure.nonRetryable(
        `Agent unreachable after its retries: all ${maxAttempts} attempts were made (counted across worker restarts)`,
        TaskErrorCode.AGENT_UNREACHABLE,
      );
    }
    // The first call's phase is written by the API or the workflow; later ones show the retries.
    if (attempt > 1) await taskStore.updateUnconditionally(task, { phase: TaskPhase.CALLING_AGENT, attempts: attempt });
    await taskStore.callStarted(before, attempt);
    const agentLabel = metrics.agent(agentId);
    metrics.calls.attempts.inc({ operation, attempt: attempt === 1 ? 'first' : 'retry', ...agentLabel });
    const callStarted = performance.now();
    const callEnded = (outcome: string) =>
      metrics.calls.duration.observe(
        { operation, protocol: agent.protocol, outcome, ...agentLabel },
        (performance.now() - callStarted) / 1000,
      );

    /**
     * Shows the failed attempt on the task (attempts, attemptErrors, phase) and returns the failure to
     * throw. Best effort: thrown instead, a failed write would turn a final refusal into a retry.
     */
    async function failedAttempt(failure: ApplicationFailure): Promise<ApplicationFailure> {
      const attemptError = {
        attempt,
        code: failure.type ?? TaskErrorCode.AGENT_UNREACHABLE,
        message: failure.message,
        at: new Date().toISOString(),
      };
      try {
        await taskStore.updateUnconditionally(task, {
          attempts: attempt,
          attemptError,
          ...(failure.nonRetryable ? {} : { phase: TaskPhase.RETRYING }),
          event: {
            type: TaskEventType.ATTEMPT_FAILED,
            attempt,
            error: { code: attemptError.code, message: attemptError.message },
          },
        });
      } catch (error) {
        context.log.warn('Recording a failed attempt failed; the attempt is missing from attemptErrors', {
          taskId,
          attempt,
          error: describeError(error),
        });
      }
      return failure;
    }

    let reply: { verdict: CallVerdict; status?: number };
    const heartbeats = isLocal ? undefined : setInterval(() => context.heartbeat(), CALL_HEARTBEAT_MS);
    const call = {
      timeoutMs: settings.callTimeoutMs,
      maxReplyBytes: settings.maxReplyBytes,
      signal: context.cancellationSignal,
    };
    const progress = new ProgressWrites(taskStore, task);
    try {
      // An MCP server's elicitation requests during the call become the task's input requests.
      const elicitation = new TaskElicitation(taskStore, claims, schemas, task, {
        deadline: Date.now() + settings.callTimeoutMs,
        signal: context.cancellationSignal,
        phase: TaskPhase.CALLING_AGENT,
      });
      // Whatever the agent starts here in turn is started on behalf of this task (ACS-Task-Lineage).
      reply = await callOnBehalfOf(parentTaskOf(before), async () => {
        switch (agent.protocol) {
          case AgentProtocol.MCP: {
            const lookup = findOperation(agent, operation);
            return {
              verdict: lookup.found
                ? await withElicitation(elicitation, () =>
                    callOverMcp(agent, lookup, params, { ...call, dispatcher, sessions, onProgress: progress.record }),
                  )
                : operationRefused(lookup),
            };
          }
          case AgentProtocol.A2A: {
            const lookup = findOperation(agent, operation);
            return {
              verdict: lookup.found
                ? await callOverA2a(
                    agent,
                    taskId,
                    lookup.entry.name,
                    params,
                    { ...call, dispatcher },
                    agent.pushNotifications && settings.a2aPush ? a2aPushConfig(settings.a2aPush, taskId) : undefined,
                  )
                : operationRefused(lookup),
            };
          }
          default:
            return callOverAcs(dispatcher, agent, { taskId, operation, params }, `${taskId}-${attempt}`, call);
        }
      });
    } catch (error) {
      if (context.cancellationSignal.aborted) {
        callEnded(CALL_ABANDONED);
        throw abandoned(agent);
      }
      const failure =
        refusalOf(error, 'Call to', agent.endpointUrl, TaskErrorCode.AGENT_URL_REFUSED) ??
        ApplicationFailure.retryable(
          withoutCredentials(`Calling ${agent.endpointUrl} failed: ${describeError(error)}`),
          TaskErrorCode.AGENT_UNREACHABLE,
        );
      callEnded(failure.type!);
      throw await failedAttempt(failure);
    } finally {
      clearInterval(heartbeats);
      await progress.close();
    }
    // The MCP client answers a request it abandoned as timed out: not a failed attempt of the agent's.
    if (context.cancellationSignal.aborted) {
      callEnded(CALL_ABANDONED);
      throw abandoned(agent);
    }
    callEnded(callOutcome(reply));
    const { verdict } = reply;

    switch (verdict.kind) {
      case 'retry':
        throw await failedAttempt(
          ApplicationFailure.retryable(
            withoutCredentials(`Calling ${agent.endpointUrl}: ${verdict.reason}`),
            TaskErrorCode.AGENT_UNREACHABLE,
          ),
        );
      case 'refused':
        throw await failedAttempt(
          ApplicationFailure.nonRetryable(verdict.error.message, verdict.error.code, verdict.error.details),
        );
      case 'accepted':
      case 'mcpTask':
      case 'a2aTask':
        await taskStore.updateUnconditionally(task, {
          phase: TaskPhase.AWAITING_AGENT_REPORT,
          attempts: attempt,
          event: { type: TaskEventType.ACCEPTED, attempt },
        });
        return verdict.kind === 'accepted' ? { kind: 'accepted', attempt } : { ...verdict, attempt };
      case 'completed':
      case 'failed':
        return recordedAnswer(taskStore, task, verdict, attempt, keepsResult);
    }
  };
}

/** The agent's answer, recorded as the task's outcome: what the workflow goes on with. */
export async function recordedAnswer(
  taskStore: TaskStore,
  task: TaskRef,
  verdict: { kind: 'completed'; result: TaskResult } | { kind: 'failed'; error: TaskError },
  attempt: number,
  keepsResult: boolean,
): Promise<AgentAnswer> {
  const outcome =
    verdict.kind === 'completed'
      ? { status: TaskStatus.COMPLETED, result: verdict.result }
      : { status: TaskStatus.FAILED, error: verdict.error };
  const recorded = await storeAnswer(taskStore, task, { ...outcome, attempts: attempt });
  return withoutStoredOutcome({ ...verdict, attempt, recorded }, keepsResult);
}

/** The answer without the result or error the task store holds, unless the workflow keeps it (CallAgentResult). */
function withoutStoredOutcome(answer: AgentAnswer, keepsResult: boolean): AgentAnswer {
  if (keepsResult || !answer.recorded || answer.kind === 'cancelled') return answer;
  return { kind: answer.kind, attempt: answer.attempt, recorded: true };
}

/** Stores the agent's answer as the task's outcome here, rather than a workflow task later: false when the write failed. */
async function storeAnswer(taskStore: TaskStore, task: TaskRef, outcome: TaskChange): Promise<boolean> {
  try {
    await taskStore.recordCallAnswer(task, outcome);
    return true;
  } catch (error) {
    Context.current().log.warn('Recording the agent answer failed; the workflow records it', {
      taskId: task.taskId,
      error: describeError(error),
    });
    return false;
  }
}

/**
 * An earlier call recorded the agent's answer and was then lost (its worker died before Temporal
 * heard of it): that answer stands, and the agent is not called again.
 */
function answerRecordedEarlier(task: TaskDocument | null): AgentAnswer {
  const view = task && toTaskView(task);
  if (view?.status === TaskStatus.COMPLETED)
    return { kind: 'completed', result: view.result!, attempt: view.attempts ?? 1, recorded: true };
  if (view?.status === TaskStatus.FAILED)
    return { kind: 'failed', error: view.error!, attempt: view.attempts ?? 1, recorded: true };
  // A run a Reset started, without the cancellation that ended the run before: the task stays cancelled.
  if (view?.status === TaskStatus.CANCELLED) return { kind: 'cancelled', attempt: view.attempts ?? 0, recorded: true };
  throw ApplicationFailure.nonRetryable(
    `Task ${task?._id ?? ''} is not in the task store: the agent is not called`,
    TaskErrorCode.AGENT_PROTOCOL_ERROR,
  );
}
