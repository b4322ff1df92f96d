import { postA2a } from '../support/a2a-rpc';
import { randomUUID } from 'node:crypto';
import type { Part } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { dataPart } from '../support/a2a-agent';
import { a2aClientFor, sendMessageRequest } from '../support/a2a-client';
import { registerAgent } from '../support/agents';
import type { CallOptions } from '../support/http';

/**
 * The JSON-RPC endpoint's errors as A2A 1.0's JSON-RPC binding has them (§9.5, §5.4): a JSON-RPC
 * response answered 200, whose `data` starts with a google.rpc.ErrorInfo.
 */
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const A2A_DOMAIN = 'a2a-protocol.org';
const SERVICE_DOMAIN = 'agent-coordination-service.dev';

const post = (agentId: string, options: CallOptions) => postA2a(`/a2a/${agentId}`, { apiKey: 'admin', ...options });

const sendMessage = (id: number, message: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'SendMessage',
  params: {
    message: { messageId: randomUUID(), role: 'ROLE_USER', ...message },
    configuration: { returnImmediately: true },
  },
});

/** What the SDK's client threw, as JSON-RPC had it. */
const rejectionOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a JSON-RPC error');
    },
    (error: { name: string; envelopeCode?: number; data?: unknown }) => error,
  );

describe("the A2A endpoint's errors", () => {
  it('answers malformed JSON -32700, a body that is not JSON-RPC -32600 and a body of another media type -32600, with id null', async () => {
    const agent = await registerAgent();
    const malformed = await post(agent.agentId, {
      headers: { 'content-type': 'application/json' },
      rawBody: '{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {',
    });
    expect({ status: malformed.status, body: malformed.body }).toEqual({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32700,
          message: expect.stringMatching(/^Malformed JSON body/),
          data: [{ '@type': ERROR_INFO, reason: 'JSON_PARSE', domain: A2A_DOMAIN }],
        },
      },
    });
    for (const body of [[1, 2], { hello: 'world' }, { jsonrpc: '2.0', id: 3, method: 7 }]) {
      const notJsonRpc = await post(agent.agentId, { body });
      expect({ status: notJsonRpc.status, body: notJsonRpc.body }).toMatchObject({
        status: 200,
        body: { jsonrpc: '2.0', id: null, error: { code: -32600 } },
      });
      expect(notJsonRpc.body.error.data[0]).toEqual({
        '@type': ERROR_INFO,
        reason: 'INVALID_REQUEST',
        domain: A2A_DOMAIN,
      });
    }
    const plainText = await post(agent.agentId, {
      headers: { 'content-type': 'text/plain' },
      rawBody: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'GetTask', params: { id: 'x' } }),
    });
    expect({ status: plainText.status, body: plainText.body }).toMatchObject({
      status: 200,
      body: { jsonrpc: '2.0', id: null, error: { code: -32600 } },
    });
    expect(plainText.body.error.data[0]).toEqual({
      '@type': ERROR_INFO,
      reason: 'UNSUPPORTED_MEDIA_TYPE',
      domain: SERVICE_DOMAIN,
    });
    // The body is read before the agent is looked up; where HTTP acts on the status (an agent the
    // caller may not see, 404), the REST API's answer stays.
    const elsewhere = await postA2a('/a2a/no-such-agent', {
      apiKey: 'admin',
      headers: { 'content-type': 'application/json' },
      rawBody: '{',
    });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.error.code).toBe(-32700);
    const unknownAgent = await postA2a('/a2a/no-such-agent', {
      apiKey: 'admin',
      body: { jsonrpc: '2.0', id: 5, method: 'GetTask', params: { id: 'x' } },
    });
    expect({ status: unknownAgent.status, code: unknownAgent.body.error.code }).toEqual({
      status: 404,
      code: 'AGENT_NOT_FOUND',
    });
  });

  it("answers params that fail the skill's schema, and an unknown skill, -32602 with the details in data, streaming too", async () => {
    const agent = await registerAgent();
    const client = await a2aClientFor(agent.agentId);
    const invalid = await rejectionOf(
      client.sendMessage(sendMessageRequest([dataPart({ skill: 'echo', params: { text: 42 } })], true)),
    );
    expect(invalid.envelopeCode).toBe(-32602);
    expect(invalid.data).toEqual([
      { '@type': ERROR_INFO, reason: 'VALIDATION_ERROR', domain: SERVICE_DOMAIN },
      {
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: [expect.objectContaining({ field: '/text', description: expect.any(String) })],
      },
    ]);
    const unknownSkill = await post(agent.agentId, {
      body: sendMessage(6, { parts: [{ data: { skill: 'nope', params: {} } }] }),
    });
    expect({ status: unknownSkill.status, id: unknownSkill.body.id, code: unknownSkill.body.error?.code }).toEqual({
      status: 200,
      id: 6,
      code: -32602,
    });
    expect(unknownSkill.body.error.data[0]).toEqual({
      '@type': ERROR_INFO,
      reason: 'OPERATION_NOT_SUPPORTED',
      domain: SERVICE_DOMAIN,
    });
    const streamed = await post(agent.agentId, {
      body: { ...sendMessage(7, { parts: [{ data: { skill: 'nope', params: {} } }] }), method: 'SendStreamingMessage' },
    });
    expect({ status: streamed.status, id: streamed.body.id, code: streamed.body.error?.code }).toEqual({
      status: 200,
      id: 7,
      code: -32602,
    });
  });

  it('answers a messageId sent again with a different message -32602, naming the messageId', async () => {
    const agent = await registerAgent();
    const messageId = randomUUID();
    const send = (id: number, text: string) =>
      post(agent.agentId, { body: sendMessage(id, { messageId, parts: [{ data: { params: { text } } }] }) });
    expect((await send(1, 'first')).body.result.task.id).toEqual(expect.any(String));
    const reused = await send(2, 'second');
    expect({ status: reused.status, body: reused.body }).toEqual({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: 2,
        error: {
          code: -32602,
          message: expect.stringContaining('messageId'),
          data: [
            { '@type': ERROR_INFO, reason: 'INVALID_PARAMS', domain: A2A_DOMAIN, metadata: { messageId } },
            {
              '@type': 'type.googleapis.com/google.rpc.BadRequest',
              fieldViolations: [{ field: '/message/messageId', description: expect.any(String) }],
            },
          ],
        },
      },
    });
  });

  it("names A2A's own errors in a google.rpc.ErrorInfo of domain a2a-protocol.org, as the SDK's client reads them", async () => {
    const agent = await registerAgent();
    const client = await a2aClientFor(agent.agentId);
    const missing = await rejectionOf(client.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined }));
    expect(missing).toBeInstanceOf(TaskNotFoundError);
    expect(missing.data).toEqual([
      { '@type': ERROR_INFO, reason: 'TASK_NOT_FOUND', domain: A2A_DOMAIN, metadata: { taskId: 'no-such-task' } },
    ]);
    const rpc = (method: string, headers: Record<string, string> = {}) =>
      post(agent.agentId, { headers, body: { jsonrpc: '2.0', id: 9, method, params: { id: 'x' } } });
    for (const [answered, code, reason] of [
      [await rpc('CreateTaskPushNotificationConfig'), -32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
      [await rpc('GetTask', { 'a2a-version': '2.0' }), -32009, 'VERSION_NOT_SUPPORTED'],
      [await rpc('NoSuchMethod'), -32601, 'METHOD_NOT_FOUND'],
      [
        await post(agent.agentId, { body: { jsonrpc: '2.0', id: 9, method: 'GetTask', params: {} } }),
        -32602,
        'INVALID_PARAMS',
      ],
    ] as const)
      expect({ code: answered.body.error.code, errorInfo: answered.body.error.data[0] }).toMatchObject({
        code,
        errorInfo: { '@type': ERROR_INFO, reason, domain: A2A_DOMAIN },
      });
  });

  it('answers a part of a media type the agent does not take -32005 (ContentTypeNotSupported)', async () => {
    const agent = await registerAgent();
    const client = await a2aClientFor(agent.agentId);
    const image: Part = {
      content: { $case: 'url', value: 'https://example.com/cat.png' },
      metadata: undefined,
      filename: 'cat.png',
      mediaType: 'image/png',
    };
    const refused = await rejectionOf(client.sendMessage(sendMessageRequest([image], true)));
    expect(refused).toBeInstanceOf(ContentTypeNotSupportedError);
    expect(refused.envelopeCode).toBe(-32005);
    expect(refused.data).toEqual([
      {
        '@type': ERROR_INFO,
        reason: 'CONTENT_TYPE_NOT_SUPPORTED',
        domain: A2A_DOMAIN,
        metadata: { mediaType: 'image/png' },
      },
    ]);
    const csv = await post(agent.agentId, {
      body: sendMessage(10, { parts: [{ text: 'a,b', mediaType: 'text/csv' }] }),
    });
    expect(csv.body.error).toMatchObject({ code: -32005, data: [{ metadata: { mediaType: 'text/csv' } }] });
  });

  it('runs no notification (a request without id) and answers it nothing: 204', async () => {
    const agent = await registerAgent();
    const { id: _id, ...notification } = sendMessage(0, { parts: [{ data: { params: { text: 'unheard' } } }] });
    const answered = await post(agent.agentId, { body: notification });
    expect({ status: answered.status, body: answered.body }).toEqual({ status: 204, body: '' });
    const listed = await post(agent.agentId, { body: { jsonrpc: '2.0', id: 11, method: 'ListTasks', params: {} } });
    expect(listed.body.result).toMatchObject({ tasks: [], totalSize: 0 });
  });
});
