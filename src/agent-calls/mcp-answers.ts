import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { causeOf } from '../ops/describe-error';

/**
 * What an MCP server answered, from the error the SDK threw for it, in one line: `HTTP 401 (...)`
 * for a refusal at the HTTP level, `error -32601: ...` for a JSON-RPC error; undefined when the
 * error is not an answer (network trouble, a timeout, the outbound guard).
 */
export function serverAnswerOf(error: unknown): string | undefined {
  const refused = causeOf(error, StreamableHTTPError);
  if (refused) return `${refused.code === undefined ? '' : `HTTP ${refused.code} `}(${refused.message})`;
  const failed = causeOf(error, McpError);
  return failed && `error ${failed.code}: ${failed.message}`;
}
