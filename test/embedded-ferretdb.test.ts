import { MongoClient } from 'mongodb';
import { SERVICE_COLLECTIONS } from '../src/service/collections';
import { testStack } from './support/test-stack';

// The test stack's FerretDB is prepared as `npm start` prepares the embedded one (src/embedded/ferretdb-id-index.ts).
describe('the embedded FerretDB', () => {
  let client: MongoClient;
  beforeAll(async () => {
    client = await MongoClient.connect(testStack().mongoUri);
  });
  afterAll(() => client.close());

  it.each(SERVICE_COLLECTIONS.map(({ name }) => name))(
    'finds documents of %s by _id through an index, not a table scan',
    async (name) => {
      const explained = await client
        .db(testStack().mongoDatabase)
        .collection(name)
        .find({ _id: 'any' as never })
        .explain();
      expect(explained.queryPlanner.Plan).toEqual([
        expect.stringMatching(/detail=SEARCH \w+ USING INDEX \w+_id_lookup \(<expr>=\?\)$/),
      ]);
    },
  );

  it('scans a collection created after it started, until the next start', async () => {
    const database = client.db(testStack().mongoDatabase);
    await database.createCollection('created_later');
    try {
      const explained = await database
        .collection('created_later')
        .find({ _id: 'any' as never })
        .explain();
      expect(explained.queryPlanner.Plan).toEqual([expect.stringMatching(/detail=SCAN \w+$/)]);
    } finally {
      await database.dropCollection('created_later');
    }
  });
});
