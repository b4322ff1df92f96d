import { randomUUID } from 'node:crypto';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Role, type Part } from '@a2a-js/sdk';
import { testStack } from './test-stack';

/** The A2A SDK's own client for an agent of the registry, found through its card, calling with the admin key. */
export function a2aClientFor(agentId: string) {
  return a2aClientAt(`${testStack().baseUrl}/agents/${agentId}/`);
}

/** The A2A SDK's own client for the card under `base` (the service's own by default), calling with `apiKey`. */
export async function a2aClientAt(base = `${testStack().baseUrl}/`, apiKey = 'admin') {
  const key = apiKey === 'admin' ? testStack().adminKey : apiKey;
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-api-key': key } });
  const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(base);
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromAgentCard(card);
}

/** A user's message of `parts`, as the SDK's client takes it, with a new messageId. */
const a2aMessage = (parts: Part[]) => ({
  messageId: randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** A SendMessage request of `parts`, as the SDK's client takes it; `returnImmediately` or A2A's default wait. */
export const sendMessageRequest = (parts: Part[], returnImmediately = false) => ({
  tenant: '',
  message: a2aMessage(parts),
  configuration: returnImmediately
    ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately }
    : undefined,
  metadata: undefined,
});
