import { call } from './http';

/** A new service key, minted by the admin: `{id, key}` (201 expected). */
export async function newServiceKey(description = 'test service'): Promise<{ id: string; key: string }> {
  const reply = await call('POST', '/keys', { apiKey: 'admin', body: { description } });
  if (reply.status !== 201) throw new Error(`POST /keys answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body as { id: string; key: string };
}
