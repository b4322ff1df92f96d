import { ApplicationFailure, Context } from '@temporalio/activity';
import { request, type Dispatcher } from 'undici';
import type { AgentStore } from '../src/registry/agent-store';
import { interpretAgentReply } from '../src/router/agent-reply';
import type { TaskIndex } from '../src/router/task-index';
import { TaskErrorCode, TaskPhase, type TaskError, type TaskResult } from '../src/router/task-types';
import { signWebhook } from '../src/router/webhook-signature';

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

    const body = JSON.stringify({ taskId, operation, params });
    let status: number;
    let text: string;
    try {
      const reply = await request(agent.mcpUrl, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', ...signWebhook(agent.signingSecret, `${taskId}-${attempt}`, body) },
        body,
        signal: AbortSignal.timeout(settings.callTimeoutMs),
      });
      status = reply.statusCode;
      text = await readLimited(reply.body, settings.maxReplyBytes);
    } catch (error) {
      await index.update(taskId, { phase: TaskPhase.RETRYING });
      throw ApplicationFailure.retryable(`Calling ${agent.mcpUrl} failed: ${describe(error)}`, TaskErrorCode.AGENT_UNREACHABLE);
    }

    const verdict = interpretAgentReply(status, text);
    switch (verdict.kind) {
      case 'retry':
        await index.update(taskId, { phase: TaskPhase.RETRYING });
        throw ApplicationFailure.retryable(`Calling ${agent.mcpUrl}: ${verdict.reason}`, TaskErrorCode.AGENT_UNREACHABLE);
      case 'refused':
        throw ApplicationFailure.nonRetryable(verdict.error.message, verdict.error.code, verdict.error.details);
      case 'accepted':
        await index.update(taskId, { phase: TaskPhase.AWAITING_AGENT_REPORT });
        return { kind: 'accepted', attempt };
      default:
        return { ...verdict, attempt };
    }
  };
}

async function readLimited(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      body.destroy();
      throw new Error(`reply body exceeds ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(error: unknown): string {
  const cause = (error as { cause?: Error }).cause;
  return [(error as Error).message, cause?.message].filter(Boolean).join(': ');
}
