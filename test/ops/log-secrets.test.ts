import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { useAgentServer } from '../support/agent-server';
import { agentRegistration, registerAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { startTask, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';

const serviceLog = () => fs.readFileSync(path.join(testStack().runDir, 'service.log'), 'utf8');

/** A value no log line could hold by chance. */
const planted = (what: string) => `planted-${what}-${randomBytes(12).toString('hex')}`;

describe('secrets in the logs and messages of a run', () => {
  const server = useAgentServer();
  const password = planted('password');

  it('refuses credentials in every URL the service calls, with 400 naming the field, without repeating them', async () => {
    const withCredentials = `http://user:${password}@127.0.0.1:9/hook`;
    const agent = await registerAgent();
    const task = { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } };
    const refusals = [
      ...['acs', 'mcp', 'a2a'].map((protocol) => ({
        path: '/agents',
        body: agentRegistration({ protocol, mcpUrl: withCredentials }),
        field: '/mcpUrl',
      })),
      {
        path: '/agents',
        body: agentRegistration({ mcpEndpoint: withCredentials, mcpUrl: undefined }),
        field: '/mcpUrl',
      },
      { path: '/agents', body: agentRegistration({ callbackUrl: withCredentials }), field: '/callbackUrl' },
      { path: '/tasks', body: { ...task, callbackUrl: withCredentials }, field: '/callbackUrl' },
      { path: '/tasks/compose', body: [{ ...task, callbackUrl: withCredentials }], field: '/0/callbackUrl' },
    ];
    for (const { path: route, body, field } of refusals) {
      const reply = await call('POST', route, { apiKey: 'admin', body });
      const error = expectError(reply, 400, 'VALIDATION_ERROR');
      expect({ route, details: error.details }).toEqual({
        route,
        details: [{ path: field, message: 'must not contain a user name or password' }],
      });
      expect(JSON.stringify(reply.body)).not.toContain(password);
    }
    const update = await call('PATCH', `/agents/${agent.agentId}`, {
      apiKey: 'admin',
      body: { callbackUrl: withCredentials },
    });
    expectError(update, 400, 'VALIDATION_ERROR');
  });

  it("never writes an agent's header values, a Temporal task token or a URL's password to the log", async () => {
    const bearer = planted('bearer');
    const custom = planted('header');
    // Nothing listens on port 9: each call fails, and the SDK logs each failed attempt of the activity.
    const mcpAgent = await registerAgent({
      protocol: 'mcp',
      headers: { Authorization: `Bearer ${bearer}`, 'X-Planted': custom },
    });
    const failing = await startTask({
      agentId: mcpAgent.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      retry: { maxAttempts: 2, initialIntervalMs: 10 },
    });
    // An agent that completes, and a task callback that fails: the callback's attempts are logged too.
    const acsAgent = await registerAgent({
      mcpUrl: server().route('completes', () => ({ status: 200, body: { status: 'completed', result: {} } })),
    });
    const withCallback = await startTask({
      agentId: acsAgent.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      callbackUrl: server().route('callback-fails', () => ({ status: 500, body: 'down' })),
    });
    expect(await waitForTask(failing)).toMatchObject({ status: 'failed', attempts: 2 });
    expect(await waitForTask(withCallback)).toMatchObject({ status: 'completed' });

    const log = await until(() => {
      const text = serviceLog();
      const sdkLines = text.split('\n').filter((line) => line.includes('"sdk":"temporal"'));
      return (
        sdkLines.some((line) => line.includes(failing)) && sdkLines.some((line) => line.includes(withCallback)) && text
      );
    }, "the SDK's lines of the failed call and the failed callback");
    for (const secret of [password, bearer, custom, mcpAgent.apiKey, mcpAgent.signingSecret, acsAgent.signingSecret])
      expect(log).not.toContain(secret);
    expect(log).not.toMatch(/"taskToken":"(?!\[redacted\])/);
  });
});
