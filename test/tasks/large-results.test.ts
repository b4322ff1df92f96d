import { useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { waitForTask } from '../support/tasks';
import { withTemporal } from '../support/temporal';
import { closedStatus, until } from '../support/until';

/**
 * Temporal terminates a run whose workflow task completes with more than 4 MiB (GrpcMessageTooLarge).
 * Sibling tasks answering large results together must not add up in one such completion: only the
 * results the workflow needs (a dependant's pending argument) travel through it.
 */
describe('a composition whose tasks answer large results at the same time', () => {
  const server = useAgentServer();

  it('completes every task, runs its workflow to the end, and sends callbacks with the whole result', async () => {
    const blob = 'x'.repeat(800 * 1024);
    const agent = await registerAgent({
      mcpUrl: server().route('large', () => ({ status: 200, body: { status: 'completed', result: { blob } } })),
    });
    const task = (extra: Record<string, unknown> = {}) => ({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'large' },
      ...extra,
    });
    const hook = server().route('large-hook', () => ({ status: 200, body: {} }));
    // Six siblings of 800 KB (4.8 MB together), one with a callback, and a dependant that takes a parent's blob.
    const body = [
      task({ callbackUrl: hook }),
      task(),
      task(),
      task(),
      task(),
      task(),
      task({ params: { text: { source: { taskId: '1', field: 'blob' }, type: 'string' } }, parents: ['1'] }),
    ];
    const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body });
    expect(reply.status).toBe(202);
    const taskIds: string[] = reply.body.map((entry: { taskId: string }) => entry.taskId);

    for (const taskId of taskIds) {
      const ended = await waitForTask(taskId);
      expect({ status: ended.status, blobLength: ended.result?.blob?.length }).toEqual({
        status: 'completed',
        blobLength: blob.length,
      });
    }
    const dependantCall = server()
      .callsTo('large')
      .find((received) => received.body?.taskId === taskIds[6]);
    expect(dependantCall?.body.params.text).toHaveLength(blob.length);

    const callback = await until(
      () =>
        server()
          .callsTo('large-hook')
          .find((received) => received.body?.taskId === taskIds[0]),
      'the callback',
    );
    expect({ status: callback.body.status, blobLength: callback.body.result?.blob?.length }).toEqual({
      status: 'completed',
      blobLength: blob.length,
    });

    await withTemporal(async (client) => {
      const workflow = client.workflow.getHandle(`composition-${reply.body[0].compositionId}`);
      expect(await closedStatus(workflow)).toBe('COMPLETED');
    });
  });
});
