import { MongoClient, type Db } from 'mongodb';
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
