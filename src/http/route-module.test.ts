import { DocumentedRouter, routeTable } from './route-module';

const TABLE = routeTable({
  versioned: false,
  operations: {
    'GET /things/:thingId': { summary: 'One thing', credential: 'any', success: [200, 'The thing'] },
    'POST /things': { summary: 'Make a thing', credential: 'any', success: [201, 'The thing'] },
  },
});

describe('DocumentedRouter', () => {
  it('serves each operation of its table at its method and path', () => {
    const router = new DocumentedRouter(TABLE);
    router.serve('GET /things/:thingId', () => undefined);
    router.serve('POST /things', () => undefined);
    const module = router.module();
    expect(module.router.stack.map((layer) => [layer.methods, layer.path])).toEqual([
      [['HEAD', 'GET'], '/things/:thingId'],
      [['POST'], '/things'],
    ]);
    expect(module.operations).toBe(TABLE.operations);
  });

  it('refuses to give its routes while an operation of its table is not served', () => {
    const router = new DocumentedRouter(TABLE);
    router.serve('POST /things', () => undefined);
    expect(() => router.module()).toThrow('Documented but not served: GET /things/:thingId');
  });
});
