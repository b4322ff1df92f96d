// bench/history: what a task costs its workflow's history in events and bytes, which bounds how many
// tasks one composition may hold (MAX_COMPOSITION_SIZE), and what the retries of an unreachable
// agent add. Starts its own stack, or uses the one ACS_TEST_STACK_FILE names (a service of another
// version, say). Run: npx tsx bench/history/run.ts [--skip-retries]
import { Client, Connection } from '@temporalio/client';
import { AgentServer, completes } from '../../test/support/agent-server';
import { registerAgent, type RegisteredAgent } from '../../test/support/agents';
import { call } from '../../test/support/http';
import { startLocalStack, type LocalStack } from '../../test/support/local-stack';
import { waitForTask } from '../../test/support/tasks';
import { testStack } from '../../test/support/test-stack';
import { historyOf } from './history-size';

const SIZES = [10, 50];
const RETRIED_ATTEMPTS = 10;

/**
 * The costliest task this service runs: a dependant whose param is a pending argument (its params
 * checked in an activity), whose agent answers 202 and reports later, with a callback of its own and
 * one to its agent. A chain of `size` of them, each reported as soon as it awaits its report.
 */
async function costliestChain(client: Client, agent: RegisteredAgent, callbackUrl: string, size: number) {
  const body = Array.from({ length: size }, (_, position) => ({
    agentId: agent.agentId,
    operation: 'tools/echo',
    params: {
      text: position === 0 ? 'start' : { source: { taskId: String(position - 1), field: 'text' }, type: 'string' },
    },
    parents: position === 0 ? [] : [String(position - 1)],
    callbackUrl,
  }));
  const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body });
  if (reply.status !== 202)
    throw new Error(`POST /tasks/compose answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  for (const { taskId } of reply.body as Array<{ taskId: string }>) {
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report', timeoutMs: 60_000 });
    const reported = await call('POST', `/tasks/${taskId}/result`, {
      apiKey: agent.apiKey,
      body: { status: 'completed', result: { text: `after ${taskId}` } },
    });
    if (reported.status !== 200) throw new Error(`report answered ${reported.status}`);
  }
  return historyOf(client, `composition-${reply.body[0].compositionId}`);
}

/** The cheapest: independent tasks answered 200 at once, no callbacks. */
async function plainComposition(client: Client, agent: RegisteredAgent, size: number) {
  const body = Array.from({ length: size }, () => ({
    agentId: agent.agentId,
    operation: 'tools/echo',
    params: { text: 'plain' },
  }));
  const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body });
  if (reply.status !== 202)
    throw new Error(`POST /tasks/compose answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return historyOf(client, `composition-${reply.body[0].compositionId}`);
}

async function main(): Promise<void> {
  let local: LocalStack | undefined;
  if (!process.env.ACS_TEST_STACK_FILE)
    local = await startLocalStack({
      runDirPrefix: 'acs-history-',
      database: 'acs_history',
      env: { LOG_LEVEL: 'warn', MAX_COMPOSITION_SIZE: String(Math.max(...SIZES)) },
    });
  const stack = testStack();
  const agentServer = await AgentServer.start();
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection, namespace: stack.temporalNamespace });
  try {
    const tool = {
      name: 'echo',
      description: 'echo',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    };
    const reporting = await registerAgent({
      mcpUrl: agentServer.route('agent', () => ({ status: 202, body: { status: 'received' } })),
      callbackUrl: agentServer.route('agent-callback', () => ({ status: 200, body: {} })),
      capabilities: { tools: [tool] },
    });
    const answering = await registerAgent({
      mcpUrl: agentServer.route('answers', completes({ ok: true })),
      capabilities: { tools: [tool] },
    });
    const lines: string[] = [];
    const perTask = async (what: string, run: (size: number) => Promise<{ events: number; bytes: number }>) => {
      const [small, large] = [await run(SIZES[0]), await run(SIZES[1])];
      const events = (large.events - small.events) / (SIZES[1] - SIZES[0]);
      const bytes = (large.bytes - small.bytes) / (SIZES[1] - SIZES[0]);
      lines.push(
        `| ${what} | ${small.events} / ${small.bytes} | ${large.events} / ${large.bytes} | ${events.toFixed(1)} | ${bytes.toFixed(0)} |`,
      );
      process.stdout.write(`${lines[lines.length - 1]}\n`);
    };
    const taskCallbackUrl = agentServer.route('task-callback', () => ({ status: 200, body: {} }));
    await perTask('costliest: dependant, pending argument, 202 then report, two callbacks', (size) =>
      costliestChain(client, reporting, taskCallbackUrl, size),
    );
    await perTask('plain: independent, answered at once', (size) => plainComposition(client, answering, size));
    process.stdout.write(
      `\n| composition | events / bytes of ${SIZES[0]} tasks | of ${SIZES[1]} tasks | events per task | bytes per task |\n|---|---|---|---|---|\n${lines.join('\n')}\n`,
    );

    if (!process.argv.includes('--skip-retries')) {
      const down = await registerAgent({
        mcpUrl: agentServer.route('down', () => ({ status: 503, body: 'database is down' })),
        capabilities: { tools: [tool] },
      });
      const reply = await call('POST', '/tasks', {
        apiKey: 'admin',
        body: {
          agentId: down.agentId,
          operation: 'tools/echo',
          params: { text: 'down' },
          retry: { maxAttempts: RETRIED_ATTEMPTS },
        },
      });
      const started = Date.now();
      const atTwoMinutes = new Promise<void>((resolve) => setTimeout(resolve, 120_000)).then(
        async () => (await client.workflow.getHandle(`task-${reply.body.taskId}`).fetchHistory()).events?.length ?? 0,
      );
      const task = await waitForTask(reply.body.taskId, { timeoutMs: 300_000 });
      const ended = await historyOf(client, `task-${reply.body.taskId}`);
      process.stdout.write(
        `\nA task whose agent answers 503, retry {maxAttempts: ${RETRIED_ATTEMPTS}} and the default intervals: ${task.status} after ${task.attempts} attempts and ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
          `${await atTwoMinutes} history events after 2 minutes, ${ended.events} (${ended.bytes} bytes) once the workflow closed\n`,
      );
    }
  } finally {
    await connection.close();
    await agentServer.close();
    await local?.stop();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
