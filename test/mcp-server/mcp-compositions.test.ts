import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client as TemporalClient } from '@temporalio/client';
import { AGENT_ID_ATTRIBUTE, OPERATION_ATTRIBUTE } from '../../workflows/search-attributes';
import { completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { useMcpClients } from '../support/mcp-clients';
import { tool, waitForTask } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';

/** What an operator sees of a composition's workflow in the Temporal Web UI, its task ids named by position. */
async function operatorView(temporal: TemporalClient, compositionId: string, taskIds: string[]) {
  const workflowId = `composition-${compositionId}`;
  // Visibility is eventually consistent: the list shows the workflow a little after its start.
  const listed = await until(async () => {
    for await (const workflow of temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` })) return workflow;
    return undefined;
  }, `${workflowId} in the workflow list`);
  const description = await temporal.workflow.getHandle(workflowId).describe();
  const byPosition = (text: string | undefined) =>
    taskIds.reduce((named, taskId, position) => named?.split(taskId).join(`<task ${position}>`), text);
  return {
    type: listed.type,
    taskQueue: listed.taskQueue,
    agentId: listed.typedSearchAttributes.get(AGENT_ID_ATTRIBUTE),
    operation: listed.typedSearchAttributes.get(OPERATION_ATTRIBUTE),
    memo: description.memo,
    summary: await description.staticSummary(),
    details: byPosition(await description.staticDetails()),
  };
}

describe('a composition started through /mcp', () => {
  const server = useAgentServer();
  const mcpClient = useMcpClients();
  const temporal = useTemporalClient();

  it('is a workflow with the search attributes, memo and summary of one started by POST /tasks/compose', async () => {
    const agent = await registerAgent({
      name: `Composed ${randomUUID().slice(0, 6)}`,
      mcpUrl: server().route('mcp-composition-view', completes({ done: true })),
      capabilities: { tools: [tool('step')] },
    });
    const step = { agentId: agent.agentId, operation: 'tools/step', params: {} };
    const tasks = [step, { ...step, parents: ['0'] }];

    const client = await mcpClient();
    const ran = (await client.callTool({ name: 'run_composition', arguments: { tasks } })) as CallToolResult;
    const viaMcp = ran.structuredContent as { compositionId: string; taskIds: string[] };
    const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body: tasks });
    expect(reply.status).toBe(202);
    const viaRest = {
      compositionId: reply.body[0].compositionId as string,
      taskIds: (reply.body as Array<{ taskId: string }>).map((each) => each.taskId),
    };
    for (const taskId of [...viaMcp.taskIds, ...viaRest.taskIds]) await waitForTask(taskId);

    const seenViaMcp = await operatorView(temporal(), viaMcp.compositionId, viaMcp.taskIds);
    expect(seenViaMcp).toMatchObject({
      type: 'compositionWorkflow',
      agentId: agent.agentId,
      operation: 'tools/step',
      summary: `Composition of 2: ${agent.name}: tools/step, ${agent.name}: tools/step`,
    });
    expect(seenViaMcp).toEqual(await operatorView(temporal(), viaRest.compositionId, viaRest.taskIds));
  });
});
