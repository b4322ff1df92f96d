import {
  ElicitRequestURLParamsSchema,
  ErrorCode as JsonRpcError,
  McpError,
  type ElicitRequestURLParams,
} from '@modelcontextprotocol/sdk/types.js';
import { TaskErrorCode } from '../../workflows/task-types';
import { rejectedByJsonRpc, type NotAnswered } from './agent-reply';
import { confirmUrlElicitation, isWebUrl } from './mcp-elicitation';

/**
 * Answers of URLElicitationRequiredError (-32042) one call may get, each completed by a person and
 * followed by the request again; the next one fails the call: a server that keeps asking would
 * otherwise hold the task until its retries ran out.
 */
export const MAX_URL_ELICITATION_ROUNDS = 3;

/** The elicitations a -32042 answer lists, each checked as MCP's ElicitRequestURLParams. */
type RequiredElicitations = { error: McpError; elicitations: ElicitRequestURLParams[] } | { invalid: string };

/** The elicitations `error` requires when it is a -32042 answer; undefined for any other error. */
function requiredElicitationsOf(error: unknown): RequiredElicitations | undefined {
  if (!(error instanceof McpError) || error.code !== (JsonRpcError.UrlElicitationRequired as number)) return undefined;
  const listed = (error.data as { elicitations?: unknown } | undefined)?.elicitations;
  if (!Array.isArray(listed) || listed.length === 0) return { invalid: 'data.elicitations lists no elicitation' };
  const elicitations: ElicitRequestURLParams[] = [];
  for (const entry of listed) {
    const parsed = ElicitRequestURLParamsSchema.safeParse(entry);
    if (!parsed.success) return { invalid: `an elicitation is not a URL-mode one: ${parsed.error.message}` };
    elicitations.push(parsed.data);
  }
  return { error, elicitations };
}

/**
 * Why the elicitations of `error` were not all completed, or nothing when a person confirmed each,
 * in order: a page that is not http(s), or one declined, fails the call; one still unanswered
 * shortly before the call's deadline is retried as a timeout is.
 */
async function unconfirmedOf({ error, elicitations }: { error: McpError; elicitations: ElicitRequestURLParams[] }) {
  for (const { message, url } of elicitations) {
    if (!isWebUrl(url))
      return rejectedByJsonRpc(
        `MCP server required a URL elicitation at a page that is not http or https, which the service does not relay: ${url}`,
        error.code,
        error.data,
      );
    const { action } = await confirmUrlElicitation(message, url);
    if (action === 'cancel')
      return { kind: 'retry' as const, reason: `No one completed the MCP server's URL elicitation in time: ${url}` };
    if (action !== 'accept')
      return rejectedByJsonRpc(
        `The MCP server's URL elicitation was declined: ${message} (${url})`,
        error.code,
        error.data,
      );
  }
  return undefined;
}

/**
 * `send`'s answer, after the URL elicitations a server required for it (-32042,
 * URLElicitationRequiredError): each is relayed to a person as a URL-mode elicitation request is
 * (mcp-elicitation.ts), and once all are confirmed the request is sent again, within the same
 * attempt and bounded by `deadline`, the end of the call's time. The server's
 * `notifications/elicitation/complete` is not awaited: the person's confirmation says the page is
 * done. Other errors are thrown on.
 */
export async function afterUrlElicitations<T>(
  deadline: number,
  send: (timeLeftMs?: number) => Promise<T>,
): Promise<T | NotAnswered> {
  for (let round = 0; ; round += 1) {
    let required: RequiredElicitations | undefined;
    try {
      return await send(round === 0 ? undefined : deadline - Date.now());
    } catch (error) {
      required = requiredElicitationsOf(error);
      if (!required) throw error;
    }
    if ('invalid' in required)
      return {
        kind: 'refused',
        error: {
          code: TaskErrorCode.AGENT_PROTOCOL_ERROR,
          message: `MCP server's URLElicitationRequiredError is outside the protocol: ${required.invalid}`,
        },
      };
    if (round >= MAX_URL_ELICITATION_ROUNDS)
      return rejectedByJsonRpc(
        `MCP server still required URL elicitations (-32042) after ${MAX_URL_ELICITATION_ROUNDS} rounds a person completed`,
        required.error.code,
        required.error.data,
      );
    const unconfirmed = await unconfirmedOf(required);
    if (unconfirmed) return unconfirmed;
    if (deadline <= Date.now())
      return { kind: 'retry', reason: "The call's time ran out while a person completed the URL elicitations" };
  }
}
