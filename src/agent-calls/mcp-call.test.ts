import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ReplyTooLarge } from './guarded-fetch';
import { toolVerdict, verdictOfError } from './mcp-call';

describe('toolVerdict', () => {
  it('takes structuredContent as the result when there is one, else {content}', () => {
    const content = [{ type: 'text' as const, text: 'sunny' }];
    expect(toolVerdict({ content, structuredContent: { sky: 'clear' } })).toEqual({
      kind: 'completed',
      result: { sky: 'clear' },
    });
    expect(toolVerdict({ content })).toEqual({ kind: 'completed', result: { content } });
  });

  it('fails isError with AGENT_TOOL_ERROR, the text blocks as message and the content as details', () => {
    const content = [
      { type: 'text' as const, text: 'first' },
      { type: 'image' as const, data: 'AA==', mimeType: 'image/png' },
      { type: 'text' as const, text: 'second' },
    ];
    expect(toolVerdict({ isError: true, content })).toEqual({
      kind: 'failed',
      error: { code: 'AGENT_TOOL_ERROR', message: 'first\nsecond', details: { content } },
    });
    expect(toolVerdict({ isError: true, content: [] })).toMatchObject({
      error: { message: 'The tool reported an error' },
    });
  });
});

describe('verdictOfError', () => {
  it('retries HTTP 408, 429 and 5xx, and refuses other HTTP answers for good', () => {
    for (const status of [408, 429, 500, 503]) {
      expect(verdictOfError(new StreamableHTTPError(status, 'x'))).toMatchObject({ kind: 'retry' });
    }
    for (const status of [400, 401, 403, 404]) {
      expect(verdictOfError(new StreamableHTTPError(status, 'x'))).toMatchObject({
        kind: 'refused',
        error: { code: 'AGENT_REJECTED', details: { status } },
      });
    }
  });

  it('refuses method and params errors for good, and retries timeouts and the other JSON-RPC errors', () => {
    for (const code of [
      ErrorCode.MethodNotFound,
      ErrorCode.InvalidParams,
      ErrorCode.InvalidRequest,
      ErrorCode.ParseError,
    ]) {
      expect(verdictOfError(new McpError(code, 'no'))).toMatchObject({
        kind: 'refused',
        error: { code: 'AGENT_REJECTED', details: { code } },
      });
    }
    for (const code of [ErrorCode.RequestTimeout, ErrorCode.InternalError, -32000]) {
      expect(verdictOfError(new McpError(code, 'later'))).toMatchObject({ kind: 'retry' });
    }
  });

  it('fails a reply longer than MAX_BODY_BYTES as a protocol error, and throws network trouble on', () => {
    expect(verdictOfError(new ReplyTooLarge(1024))).toMatchObject({
      kind: 'refused',
      error: { code: 'AGENT_PROTOCOL_ERROR' },
    });
    const network = new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') });
    expect(() => verdictOfError(network)).toThrow(network);
  });
});
