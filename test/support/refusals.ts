import type { Db } from 'mongodb';
import type { AgentServer } from './agent-server';
import type { RegisteredAgent } from './agents';
import { call, expectError } from './http';

/** Where a refused request could leave a trace: the tasks of `agents`, and calls to `server`. */
export interface Traces {
  database: () => Db;
  server: () => AgentServer;
  agents: () => RegisteredAgent[];
}

/**
 * POSTs `body` to `path` as admin, expects the contract's error with `status` and `code`, and that
 * the refusal left no trace: no task of the agents stored, no call made. Returns the error.
 */
export async function refusedWithoutTrace(
  { database, server, agents }: Traces,
  path: string,
  body: unknown,
  status: number,
  code: string,
): Promise<{ code: string; message: string; details?: any }> {
  // Only these agents' tasks: other test files create tasks at the same time.
  const traces = async () => ({
    tasks: await database()
      .collection('tasks')
      .countDocuments({ agentId: { $in: agents().map((agent) => agent.agentId) } }),
    calls: server().calls.length,
  });
  const before = await traces();
  const error = expectError(await call('POST', path, { apiKey: 'admin', body }), status, code);
  expect(await traces()).toEqual(before);
  return error;
}
