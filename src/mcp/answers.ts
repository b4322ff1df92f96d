import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * What an MCP server answered, from the error the SDK threw for it, in one line: `HTTP 401 (...)`
 * for a refusal at the HTTP level, `error -32601: ...` for a JSON-RPC error; undefined when the
 * error is not an answer (network trouble, a timeout, the outbound guard).
 */
export function serverAnswerOf(error: unknown): string | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof StreamableHTTPError)
      return `${cause.code === undefined ? '' : `HTTP ${cause.code} `}(${cause.message})`;
    if (cause instanceof McpError) return `error ${cause.code}: ${cause.message}`;
  }
  return undefined;
}
