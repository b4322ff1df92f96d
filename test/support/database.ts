import { MongoClient, type Db, type Document } from 'mongodb';
import { SecretBox } from '../../src/auth/secret-box';
import { AgentStore, secretContextOf } from '../../src/registry/agent-store';
import type { Store } from '../../src/store/mongo';
import { testStack } from './test-stack';

/**
 * The test stack's database, for asserting stored state: connects before the file's tests and
 * closes after them. Call at the top of a test file; use the returned function inside tests.
 */
export function useTestDatabase(): () => Db {
  let client: MongoClient | undefined;
  beforeAll(async () => {
    client = await MongoClient.connect(testStack().mongoUri);
  });
  afterAll(() => client?.close());
  return () => {
    if (!client) throw new Error('useTestDatabase: the database is only there inside tests');
    return client.db(testStack().mongoDatabase);
  };
}

const stackSecrets = () => new SecretBox(Buffer.from(testStack().secretsKey, 'base64'));

/** The agents of the test stack's database, their signing secrets opened with the stack's SECRETS_KEY. */
export function stackAgents(store: Store): AgentStore {
  return new AgentStore(store, stackSecrets());
}

/** The signing secret of an agent document as the driver reads it, opened with the stack's SECRETS_KEY. */
export function openedSigningSecret(stored: Document | null): string {
  if (!stored) throw new Error('openedSigningSecret: no agent document');
  return stackSecrets().open(stored.signingSecret, secretContextOf(stored._id));
}
