import { randomBytes } from 'node:crypto';
import { AgentServer, completes, signatureWith, type ReceivedCall } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { startSecondApi } from '../support/second-api';
import { waitForTask } from '../support/tasks';
import { until } from '../support/until';

/** Agents' signing secrets as the store holds them: sealed with SECRETS_KEY, never `whsec_` in plaintext. */
describe('signing secrets at rest', () => {
  const database = useTestDatabase();
  let server: AgentServer;
  beforeAll(async () => {
    server = await AgentServer.start();
  });
  afterAll(() => server.close());

  const storedAgent = (agentId: string) =>
    database().collection<{ _id: string; signingSecret: string }>('agents').findOne({ _id: agentId });

  /** Registers an agent that completes on `{name}-mcp` and takes callbacks on `{name}-hook`. */
  const agentNamed = (name: string) =>
    registerAgent({
      mcpUrl: server.route(`${name}-mcp`, completes({ text: 'ok' })),
      callbackUrl: server.route(`${name}-hook`, () => ({ status: 204 })),
    });

  /** Runs a task of `agent` to its end, and returns the call it got and the callback it was sent. */
  async function runTask(
    agent: RegisteredAgent,
    name: string,
  ): Promise<{ toAgent: ReceivedCall; callback: ReceivedCall }> {
    const reply = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: name } },
    });
    expect(reply.status).toBe(202);
    const { taskId } = reply.body;
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });
    const toAgent = server.callsTo(`${name}-mcp`).find((received) => received.body?.taskId === taskId);
    const callback = await until(
      () => server.callsTo(`${name}-hook`).find((received) => received.body?.taskId === taskId),
      `the callback of ${taskId}`,
    );
    expect(toAgent).toBeDefined();
    return { toAgent: toAgent!, callback };
  }

  function expectSealed(stored: { signingSecret: string } | null, secret: string): void {
    expect(stored?.signingSecret).toMatch(/^v1\.[\w-]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    const text = JSON.stringify(stored);
    expect(text).not.toContain('whsec_');
    expect(text).not.toContain(secret.slice('whsec_'.length));
  }

  it('stores the secret sealed, and the calls and callbacks signed with it verify', async () => {
    const agent = await agentNamed('sealed');
    expectSealed(await storedAgent(agent.agentId), agent.signingSecret);
    const { toAgent, callback } = await runTask(agent, 'sealed');
    expect(toAgent.headers['webhook-signature']).toBe(signatureWith(agent.signingSecret, toAgent));
    expect(callback.headers['webhook-signature']).toBe(signatureWith(agent.signingSecret, callback));
  });

  it('stores a rotated secret sealed, and signs with it', async () => {
    const agent = await agentNamed('rotated');
    const before = await storedAgent(agent.agentId);
    const rotated = await call('POST', `/agents/${agent.agentId}/keys/rotate`, { apiKey: 'admin' });
    expect(rotated.status).toBe(200);
    const after = await storedAgent(agent.agentId);
    expectSealed(after, rotated.body.signingSecret);
    expect(after?.signingSecret).not.toBe(before?.signingSecret);
    const { callback } = await runTask(agent, 'rotated');
    expect(callback.headers['webhook-signature']).toBe(signatureWith(rotated.body.signingSecret, callback));
  });

  it('uses a secret an older version stored in plaintext, and seals it at the next start, once', async () => {
    const agent = await agentNamed('legacy');
    // As a version before sealing stored it.
    await database()
      .collection<{ _id: string }>('agents')
      .updateOne({ _id: agent.agentId }, { $set: { signingSecret: agent.signingSecret } });
    const before = await runTask(agent, 'legacy');
    expect(before.toAgent.headers['webhook-signature']).toBe(signatureWith(agent.signingSecret, before.toAgent));

    const first = await startSecondApi('seal-at-start');
    await first.process.stop();
    const sealed = await storedAgent(agent.agentId);
    expectSealed(sealed, agent.signingSecret);
    const second = await startSecondApi('seal-at-start-again');
    await second.process.stop();
    expect((await storedAgent(agent.agentId))?.signingSecret).toBe(sealed?.signingSecret);

    const after = await runTask(agent, 'legacy');
    expect(after.callback.headers['webhook-signature']).toBe(signatureWith(agent.signingSecret, after.callback));
  });

  it('refuses to start with a SECRETS_KEY that did not seal the stored secrets, and says which key they need', async () => {
    const agent = await agentNamed('wrong-key');
    const stored = await storedAgent(agent.agentId);
    await expect(startSecondApi('wrong-key', { SECRETS_KEY: randomBytes(32).toString('base64') })).rejects.toThrow(
      /does not open: Sealed with key [\w-]{8}, which is neither the current nor a previous key/,
    );
    expect(await storedAgent(agent.agentId)).toEqual(stored);
  });
});
