import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { Dispatcher } from 'undici';
import type { RecentAgents } from '../src/registry/recent-agents';
import { isRetriedStatus } from '../src/agent-calls/agent-reply';
import { toTaskView } from '../src/tasks/task-views';
import type { TaskStore } from '../src/tasks/task-store';
import type { TaskCallback } from '../workflows/task-types';
import type { CallbackTarget } from '../workflows/activity-contract';
import { postSigned } from '../src/agent-calls/signed-post';
import { refusalOf } from './call-failures';
import { describeError } from '../src/ops/describe-error';
import type { Metrics } from '../src/ops/metrics';
import { withoutCredentials } from '../src/util/url-credentials';

export interface DeliverCallbackSettings {
  /** CALLBACK_SIGNING_SECRET: signs callbacks to a task's own callbackUrl. */
  callbackSigningSecret?: string;
  callTimeoutMs: number;
}

/**
 * One delivery attempt of a completion callback, signed with CALLBACK_SIGNING_SECRET for a task's
 * callbackUrl and with the agent's signingSecret for its registered one. Network trouble, 408, 429
 * and 5xx are retried by the workflow's policy; other refusals are final, and so is the outbound
 * guard's refusal of the address.
 */
export function deliverCallbackActivity(
  agents: RecentAgents,
  taskStore: TaskStore,
  dispatcher: Dispatcher,
  settings: DeliverCallbackSettings,
  metrics: Metrics,
) {
  /** `outcomeInStore`: the workflow did not hold the task's result or error (CallAgentResult); the callback reads them from the task store. */
  return async function deliverCallback(
    target: CallbackTarget,
    sent: TaskCallback,
    outcomeInStore = false,
  ): Promise<void> {
    const destination = await destinationOf(target);
    if (!destination) return;
    const callback = outcomeInStore ? await withStoredOutcome(sent) : sent;
    try {
      await deliver(destination, callback, target.kind);
      metrics.callbacks.inc({ outcome: 'delivered' });
    } catch (error) {
      const failure = error as ApplicationFailure;
      const { attempt, retryPolicy } = Context.current().info;
      const last = failure.nonRetryable || attempt >= (retryPolicy?.maximumAttempts ?? Infinity);
      metrics.callbacks.inc({ outcome: last ? 'given_up' : 'retried' });
      throw error;
    }
  };

  async function deliver(
    destination: { url: string; secret: string },
    callback: TaskCallback,
    kind: CallbackTarget['kind'],
  ): Promise<void> {
    let status: number;
    try {
      ({ status } = await postSigned(dispatcher, {
        ...destination,
        messageId: `${callback.taskId}-callback-${kind}`,
        payload: callback,
        timeoutMs: settings.callTimeoutMs,
        maxReplyBytes: 64 * 1024,
      }));
    } catch (error) {
      throw (
        refusalOf(error, 'Callback to', destination.url) ??
        ApplicationFailure.retryable(
          withoutCredentials(`Callback to ${destination.url} failed: ${describeError(error)}`),
        )
      );
    }
    if (status >= 200 && status < 300) return;
    const message = `Callback to ${withoutCredentials(destination.url)} answered ${status}`;
    if (isRetriedStatus(status)) throw ApplicationFailure.retryable(message);
    throw ApplicationFailure.nonRetryable(message);
  }

  async function withStoredOutcome(callback: TaskCallback): Promise<TaskCallback> {
    const task = await taskStore.find(callback.taskId);
    const view = task && toTaskView(task);
    if (!view) throw ApplicationFailure.nonRetryable(`Task ${callback.taskId} is not in the task store`);
    return {
      ...callback,
      ...(view.result === undefined ? {} : { result: view.result }),
      ...(view.error === undefined ? {} : { error: view.error }),
    };
  }

  async function destinationOf(target: CallbackTarget): Promise<{ url: string; secret: string } | undefined> {
    if (target.kind === 'agent') {
      const agent = await agents.findById(target.agentId);
      return agent?.callbackUrl ? { url: agent.callbackUrl, secret: agent.signingSecret } : undefined;
    }
    if (!settings.callbackSigningSecret) {
      log.warn('CALLBACK_SIGNING_SECRET is not set: a task callback is not sent', {
        url: withoutCredentials(target.url),
      });
      return undefined;
    }
    return { url: target.url, secret: settings.callbackSigningSecret };
  }
}
