import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { echoWorkflow } from './fixtures/echo-workflow';
import { testStack } from './support/test-stack';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

Runtime.install({ logger: new DefaultLogger('WARN') });

describe('Temporal dev server of the test stack', () => {
  const stack = testStack();
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    connection = await Connection.connect({ address: stack.temporalAddress });
    client = new Client({ connection, namespace: stack.temporalNamespace });
  });
  afterAll(async () => {
    await connection.close();
  });

  it('runs a workflow whose activity executes on a real worker', async () => {
    const taskQueue = `echo-${randomUUID()}`;
    const workerConnection = await NativeConnection.connect({ address: stack.temporalAddress });
    const worker = await Worker.create({
      connection: workerConnection,
      namespace: stack.temporalNamespace,
      taskQueue,
      workflowsPath: require.resolve('./fixtures/echo-workflow'),
      activities: { shout: async (text: string) => text.toUpperCase() },
    });
    try {
      const result = await worker.runUntil(
        client.workflow.execute(echoWorkflow, { taskQueue, workflowId: `echo-${randomUUID()}`, args: ['hello'] }),
      );
      expect(result).toBe('HELLO!');
    } finally {
      await workerConnection.close();
    }
  });

  it('has the AgentId and Operation search attributes registered', async () => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({
      namespace: stack.temporalNamespace,
    });
    for (const attribute of SEARCH_ATTRIBUTES) {
      expect(Object.keys(customAttributes ?? {})).toContain(attribute.name);
    }
  });
});
