import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Dispatcher } from 'undici';
import type { AgentStore } from '../src/registry/agent-store';
import { interpretAgentReply } from '../src/router/agent-reply';
import type { TaskIndex } from '../src/router/task-index';
import { TaskErrorCode, TaskPhase, type TaskError, type TaskResult } from '../src/router/task-types';
import { describeError, postSigned } from './signed-post';

export interface CallAgentInput {
  taskId: string;
  agentId: string;
  operation: string;
  params: Record<string, unknown>;
}

/** What the workflow goes on with; every other outcome is thrown as an ApplicationFailure. */
export type CallAgentResult =
  | { kind: 'completed'; result: TaskResult; attempt: number }
  | { kind: 'failed'; error: TaskError; attempt: number }
  | { kind: 'accepted'; attempt: number };

export interface CallAgentSettings {
  callTimeoutMs: number;
  /** Largest reply body read from an agent. */
  maxReplyBytes: number;
}

/**
 * One signed `POST mcpUrl` per attempt. Retryable trouble (network, timeout, 408, 429, 5xx) is thrown
 * as a retryable failure so Temporal's retry policy spaces the attempts; 400/404/422 and replies
 * outside the protocol are thrown non-retryable, with the task error as details.
 */
export function callAgentActivity(agents: AgentStore, index: TaskIndex, dispatcher: Dispatcher, settings: CallAgentSettings) {
  return async function callAgent({ taskId, agentId, operation, params }: CallAgentInput): Promise<CallAgentResult> {
    const { attempt } = Context.current().info;
    const agent = await agents.findById(agentId);
    if (!agent) throw ApplicationFailure.nonRetryable(`Agent ${agentId} no longer exists`, TaskErrorCode.AGENT_NOT_FOUND);
    // The first attempt's phase is written by the API or the workflow; later ones show the retries.
    if (attempt > 1) await index.update(taskId, { phase: TaskPhase.CALLING_AGENT, attempts: attempt });

    /** Shows the failed attempt on the task (attempts, attemptErrors, phase) and returns the failure to throw. */
    async function failedAttempt(failure: ApplicationFailure): Promise<ApplicationFailure> {
      const attemptError = { attempt, code: failure.type ?? TaskErrorCode.AGENT_UNREACHABLE, message: failure.message, at: new Date().toISOString() };
      await index.update(taskId, { attempts: attempt, attemptError, ...(failure.nonRetryable ? {} : { phase: TaskPhase.RETRYING }) });
      return failure;
    }

    let status: number;
    let text: string;
    try {
      ({ status, text } = await postSigned(dispatcher, {
        url: agent.mcpUrl,
        secret: agent.signingSecret,
        messageId: `${taskId}-${attempt}`,
        payload: { taskId, operation, params },
        timeoutMs: settings.callTimeoutMs,
        maxReplyBytes: settings.maxReplyBytes,
      }));
    } catch (error) {
      throw await failedAttempt(ApplicationFailure.retryable(`Calling ${agent.mcpUrl} failed: ${describeError(error)}`, TaskErrorCode.AGENT_UNREACHABLE));
    }

    const verdict = interpretAgentReply(status, text);
    switch (verdict.kind) {
      case 'retry':
        throw await failedAttempt(ApplicationFailure.retryable(`Calling ${agent.mcpUrl}: ${verdict.reason}`, TaskErrorCode.AGENT_UNREACHABLE));
      case 'refused':
        throw await failedAttempt(ApplicationFailure.nonRetryable(verdict.error.message, verdict.error.code, verdict.error.details));
      case 'accepted':
        await index.update(taskId, { phase: TaskPhase.AWAITING_AGENT_REPORT });
        return { kind: 'accepted', attempt };
      default:
        return { ...verdict, attempt };
    }
  };
}
