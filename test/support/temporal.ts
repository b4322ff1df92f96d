import { Client, Connection } from '@temporalio/client';
import { testStack } from './test-stack';
import { useForFile } from './use-for-file';

/** A Temporal client of the test stack: what an operator's tools read and do. Close it after use. */
export async function connectTemporal(): Promise<{ client: Client; close: () => Promise<void> }> {
  const connection = await Connection.connect({ address: testStack().temporalAddress });
  return {
    client: new Client({ connection, namespace: testStack().temporalNamespace }),
    close: () => connection.close(),
  };
}

/** `use` with a client of the test stack, its connection closed after. */
export async function withTemporal<T>(use: (client: Client) => Promise<T>): Promise<T> {
  const { client, close } = await connectTemporal();
  try {
    return await use(client);
  } finally {
    await close();
  }
}

/** A Temporal client of the test stack for the file's tests: connected before them, closed after. Call the returned function inside tests. */
export function useTemporalClient(): () => Client {
  const connected = useForFile('useTemporalClient: the client', connectTemporal, (client) => client.close());
  return () => connected().client;
}
