// An example agent that asks a person before it acts, with nothing but Node's standard library and
// the echo example's signature check. Called for `tools/delete`, it answers 202, then reports
// `input-required` with a question and the schema of the answer; the service makes the task
// `input-required` and waits. Once someone answers (POST /tasks/{taskId}/input), the service sends
// the answer here, signed, as `{taskId, operation, requestId, input}`: the agent deletes and reports
// `completed`, or reports `failed` when the answer is no. The flow: docs/agents.md, "Asking a person".
//
// Run it:   ACS_URL=http://127.0.0.1:3000 AGENT_API_KEY=… AGENT_SIGNING_SECRET=whsec_… PORT=4001 npx tsx examples/confirming-agent.ts
// after registering an agent whose mcpUrl is http://127.0.0.1:4001/mcp with a tool `delete` ({path: string}).
import type http from 'node:http';
import { report, serveSignedCalls } from './echo-agent';

export interface ConfirmingAgentOptions {
  port: number;
  /** Base URL of the coordination service, for the reports. */
  serviceUrl: string;
  /** The agent's API key (X-Api-Key), returned once by the registration. */
  apiKey: string;
  /** The agent's `whsec_…` signingSecret, returned once by the registration. */
  signingSecret: string;
  /** What "deleting" does; the example only records the paths. */
  remove?: (path: string) => void;
}

/** The answer the agent asks for: a yes or no. */
export const CONFIRMATION_SCHEMA = {
  type: 'object',
  required: ['confirm'],
  additionalProperties: false,
  properties: { confirm: { type: 'boolean', description: 'Delete it?' } },
};

type Call =
  | { taskId: string; operation: string; params: { path: string } }
  | { taskId: string; operation: string; requestId: string; input: { confirm: boolean } }
  | { taskId: string; cancel: true };

export function startConfirmingAgent(options: ConfirmingAgentOptions): Promise<http.Server> {
  // What each task waiting for its answer is about to delete.
  const asked = new Map<string, string>();

  function handle(call: Call): void {
    if ('cancel' in call) {
      asked.delete(call.taskId);
      return;
    }
    if ('input' in call) {
      const path = asked.get(call.taskId);
      if (path === undefined) return;
      asked.delete(call.taskId);
      if (!call.input.confirm) {
        void report(options, call.taskId, {
          status: 'failed',
          error: { code: 'NOT_CONFIRMED', message: `${path} kept` },
        });
        return;
      }
      options.remove?.(path);
      void report(options, call.taskId, { status: 'completed', result: { deleted: path } });
      return;
    }
    asked.set(call.taskId, call.params.path);
    // Asked once the 202 went out, so that the question never comes before the answer it follows.
    setImmediate(() => {
      void report(options, call.taskId, {
        status: 'input-required',
        message: `Delete ${call.params.path}?`,
        inputSchema: CONFIRMATION_SCHEMA,
      });
    });
  }

  return serveSignedCalls(options.port, options.signingSecret, (body, answer) => {
    const call = body as Call;
    if (!('cancel' in call) && !('input' in call) && call.operation !== 'tools/delete')
      return answer(404, { status: 'failed', error: { code: 'UNKNOWN_OPERATION', message: call.operation } });
    answer('input' in call || 'cancel' in call ? 200 : 202, { status: 'received' });
    handle(call);
  });
}

if (require.main === module) {
  const serviceUrl = process.env.ACS_URL ?? 'http://127.0.0.1:3000';
  const apiKey = process.env.AGENT_API_KEY ?? '';
  const signingSecret = process.env.AGENT_SIGNING_SECRET ?? '';
  const port = Number(process.env.PORT ?? 4001);
  void startConfirmingAgent({
    port,
    serviceUrl,
    apiKey,
    signingSecret,
    remove: (path) => console.log(`deleted ${path}`),
  }).then(() => console.log(`confirming agent on http://127.0.0.1:${port}/mcp`));
}
