import { ApplicationFailure, log } from '@temporalio/activity';
import { DestinationRefused } from '../src/agent-calls/outbound-guard';
import { causeOf, describeError } from '../src/ops/describe-error';
import { verdictOfError, type McpCallVerdict } from '../src/agent-calls/mcp-call';
import { TaskErrorCode } from '../workflows/task-types';
import { withoutCredentials } from '../src/util/url-credentials';

/**
 * The failure of a call the outbound guard refused, or undefined when `error` is anything else.
 * Non-retryable: the refusal is policy, and a retry would only deliver later what was refused (once
 * a restart allowed private addresses, say). The message names the URL as given without its
 * credentials, not the address it led to; the operator's log has that.
 */
export function refusalOf(error: unknown, call: string, url: string, type?: string): ApplicationFailure | undefined {
  const refused = causeOf(error, DestinationRefused);
  if (!refused) return undefined;
  const shown = withoutCredentials(url);
  log.warn('Outbound call refused by the address guard', { url: shown, address: refused.address });
  return ApplicationFailure.nonRetryable(`${call} ${shown} refused: ${refused.message}`, type);
}

/**
 * `read`'s verdict of a failed request to an agent; what `read` throws on instead is the activity's
 * failure: final for the outbound guard's refusal (AGENT_URL_REFUSED), retried for network trouble
 * (AGENT_UNREACHABLE). `doing` and `url` name the request in messages.
 */
export function verdictOrFailure<V>(error: unknown, read: (error: unknown) => V, doing: string, url: string): V {
  try {
    return read(error);
  } catch (thrown) {
    throw (
      refusalOf(thrown, doing, url, TaskErrorCode.AGENT_URL_REFUSED) ??
      ApplicationFailure.retryable(
        withoutCredentials(`${doing} ${url} failed: ${describeError(thrown)}`),
        TaskErrorCode.AGENT_UNREACHABLE,
      )
    );
  }
}

/** What a failed MCP request of an activity means: verdictOrFailure of verdictOfError. */
export function answerOf(error: unknown, doing: string, url: string): McpCallVerdict {
  return verdictOrFailure(error, verdictOfError, doing, url);
}
