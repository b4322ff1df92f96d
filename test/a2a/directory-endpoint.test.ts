import { newServiceKey } from '../support/keys';
import { randomUUID } from 'node:crypto';
import type { Message, Part } from '@a2a-js/sdk';
import { a2aClientAt, sendMessageRequest } from '../support/a2a-client';
import { A2A_VERSION_HEADERS, postA2a } from '../support/a2a-rpc';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { testStack } from '../support/test-stack';
import { tool } from '../support/tasks';

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

/** The data part of the directory's answer, as the SDK's client reads it. */
function foundIn(answer: unknown): { agents: Array<Record<string, any>>; next?: string } {
  const message = answer as Message;
  const data = message.parts.find((part) => part.content?.$case === 'data')?.content;
  if (data?.$case !== 'data') throw new Error(`no data part in ${JSON.stringify(answer)}`);
  return data.value as { agents: Array<Record<string, any>>; next?: string };
}

/** A JSON-RPC request to the directory, as A2A 1.0. */
const directory = (method: string, params: unknown, apiKey = 'admin') =>
  postA2a('/a2a', { apiKey, body: { jsonrpc: '2.0', id: method, method, params } });

const sendMessage = (parts: unknown[]) => ({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts } });

describe("the service's own A2A endpoint, a directory", () => {
  it('answers a text query with a message listing the agents found, each reachable through its card, through the A2A SDK', async () => {
    const word = `zebra${randomUUID().slice(0, 8)}`;
    const agent = await registerAgent({
      description: `Counts ${word} stripes`,
      capabilities: { tools: [tool('count')] },
    });
    const client = await a2aClientAt();
    const answer = await client.sendMessage(sendMessageRequest([textPart(word)]));
    const { baseUrl } = testStack();
    expect(foundIn(answer).agents).toEqual([
      {
        agentId: agent.agentId,
        name: agent.name,
        description: `Counts ${word} stripes`,
        skills: ['count'],
        agentCardUrl: `${baseUrl}/agents/${agent.agentId}/.well-known/agent-card.json`,
        url: `${baseUrl}/a2a/${agent.agentId}`,
      },
    ]);
    expect((answer as Message).role).toBe(2); // ROLE_AGENT
    const card = await call('GET', `/agents/${agent.agentId}/.well-known/agent-card.json`);
    expect(card.body.supportedInterfaces[0].url).toBe(`${baseUrl}/a2a/${agent.agentId}`);
  });

  it('searches as GET /agents/search does: by capability, a page at a time, only what the caller may see', async () => {
    const word = `okapi${randomUUID().slice(0, 8)}`;
    const owner = (await newServiceKey()).key;
    const capability = `tools/${word}`;
    const agents = [];
    for (let index = 0; index < 3; index++)
      agents.push(await registerAgent({ capabilities: { tools: [tool(word)] }, visibility: 'private' }, owner));
    const ids = agents.map((agent) => agent.agentId).sort();

    const search = (params: Record<string, unknown>, apiKey = owner) =>
      directory('SendMessage', sendMessage([{ data: { skill: 'search-agents', params } }]), apiKey);
    const first = await search({ capability, limit: 2 });
    const firstPage = first.body.result.message.parts[1].data;
    expect(firstPage.agents.map((agent: { agentId: string }) => agent.agentId)).toEqual(ids.slice(0, 2));
    expect(firstPage.next).toBe(ids[1]);
    const second = (await search({ capability, limit: 2, after: firstPage.next })).body.result.message.parts[1].data;
    expect(second).toEqual({ agents: [expect.objectContaining({ agentId: ids[2] })] });

    // Another service sees none of them; the REST search agrees.
    const stranger = (await newServiceKey()).key;
    expect((await search({ capability }, stranger)).body.result.message.parts).toEqual([
      { text: 'No agent found' },
      { data: { agents: [] }, mediaType: 'application/json' },
    ]);
    const rest = await call('GET', `/agents/search?capability=${capability}`, { apiKey: owner });
    expect(rest.body.map((agent: { agentId: string }) => agent.agentId)).toEqual(ids);
  });

  it("keeps the message's contextId and answers at once, without a task", async () => {
    const contextId = randomUUID();
    const answered = await directory('SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', contextId, parts: [{ text: '' }] },
    });
    expect(answered.body.result).toEqual({
      message: {
        messageId: expect.any(String),
        role: 'ROLE_AGENT',
        contextId,
        parts: [{ text: expect.any(String) }, { data: expect.any(Object), mediaType: 'application/json' }],
      },
    });
    expect((await directory('ListTasks', {})).body.result).toEqual({
      tasks: [],
      nextPageToken: '',
      pageSize: 50,
      totalSize: 0,
    });
  });

  it("answers A2A's errors, with ErrorInfo, for what it does not do or is asked wrongly", async () => {
    const errorOf = async (reply: Promise<{ body: any }>) => {
      const { error } = (await reply).body;
      return { code: error.code, reason: error.data[0].reason, type: error.data[0]['@type'] };
    };
    const cases: Array<[Promise<{ body: any }>, number, string]> = [
      [directory('GetTask', { id: 'no-such-task' }), -32001, 'TASK_NOT_FOUND'],
      [directory('CancelTask', { id: 'no-such-task' }), -32001, 'TASK_NOT_FOUND'],
      [directory('SubscribeToTask', { id: 'no-such-task' }), -32004, 'UNSUPPORTED_OPERATION'],
      [directory('SendStreamingMessage', sendMessage([{ text: 'x' }])), -32004, 'UNSUPPORTED_OPERATION'],
      [directory('CreateTaskPushNotificationConfig', {}), -32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
      [directory('GetExtendedAgentCard', {}), -32004, 'UNSUPPORTED_OPERATION'],
      [directory('NoSuchMethod', {}), -32601, 'METHOD_NOT_FOUND'],
      [directory('SendMessage', sendMessage([{ data: { skill: 'translate', params: {} } }])), -32602, 'INVALID_PARAMS'],
      [directory('SendMessage', sendMessage([{ data: { params: { limit: 0 } } }])), -32602, 'INVALID_PARAMS'],
      [directory('SendMessage', sendMessage([{ data: { params: { owner: 'x' } } }])), -32602, 'INVALID_PARAMS'],
      [
        directory('SendMessage', sendMessage([{ url: 'https://example.com/a.png' }])),
        -32005,
        'CONTENT_TYPE_NOT_SUPPORTED',
      ],
      [
        directory('SendMessage', { ...sendMessage([{ text: 'x' }]), configuration: { pushNotificationConfig: {} } }),
        -32003,
        'PUSH_NOTIFICATION_NOT_SUPPORTED',
      ],
      [
        call('POST', '/a2a', { apiKey: 'admin', body: { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} } }),
        -32009,
        'VERSION_NOT_SUPPORTED',
      ],
      [
        call('POST', '/a2a', {
          apiKey: 'admin',
          headers: { ...A2A_VERSION_HEADERS, 'content-type': 'application/json' },
          rawBody: '{',
        }),
        -32700,
        'JSON_PARSE',
      ],
    ];
    for (const [reply, code, reason] of cases) expect(await errorOf(reply)).toEqual({ code, reason, type: ERROR_INFO });

    const invalid = await directory('SendMessage', sendMessage([{ data: { params: { limit: 0 } } }]));
    expect(invalid.body.error.data).toContainEqual(
      expect.objectContaining({
        fieldViolations: [expect.objectContaining({ field: expect.stringContaining('limit') })],
      }),
    );
  });

  it('runs no notification, and refuses a caller without credentials as the REST API does', async () => {
    const notification = await postA2a('/a2a', {
      apiKey: 'admin',
      body: { jsonrpc: '2.0', method: 'SendMessage', params: sendMessage([{ text: 'x' }]) },
    });
    expect({ status: notification.status, body: notification.body }).toEqual({ status: 204, body: '' });
    const anonymous = await postA2a('/a2a', { body: { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} } });
    expect({ status: anonymous.status, code: anonymous.body.error.code }).toEqual({
      status: 401,
      code: 'UNAUTHENTICATED',
    });
  });
});
