import { RecordCache } from './record-cache';

interface Row {
  id: string;
  text: string;
}

/** A store of rows in memory that counts its reads by `_id`; `hold` keeps the next reads waiting until `release`. */
function setUp(budgetBytes?: number) {
  const rows = new Map<string, Row>();
  const reads: string[] = [];
  let held: Array<() => void> | undefined;
  const read = async (id: string) => {
    reads.push(id);
    const row = rows.get(id) ?? null;
    if (held) await new Promise<void>((resolve) => held!.push(resolve));
    return row;
  };
  const hold = () => {
    held = [];
  };
  const release = () => {
    const waiting = held ?? [];
    held = undefined;
    waiting.forEach((resume) => resume());
  };
  return { rows, reads, hold, release, cache: new RecordCache<Row>(read, budgetBytes) };
}

const ids = (count: number) => Array.from({ length: count }, (_, index) => `row-${String(index).padStart(4, '0')}`);

describe('RecordCache', () => {
  it('reads a page of 200 records once: the next pages of the same records cost no read', async () => {
    const { rows, reads, cache } = setUp();
    for (const id of ids(200)) rows.set(id, { id, text: `text of ${id}` });
    expect((await cache.getMany(ids(200))).map((row) => row.id)).toEqual(ids(200));
    expect(reads).toHaveLength(200);
    for (let page = 0; page < 5; page += 1) expect(await cache.getMany(ids(200))).toHaveLength(200);
    expect(reads).toHaveLength(200);
  });

  it('serves a record it was given without reading it, until told it changed', async () => {
    const { rows, reads, cache } = setUp();
    rows.set('row-0000', { id: 'row-0000', text: 'stored' });
    cache.keep('row-0000', { id: 'row-0000', text: 'stored' });
    expect(await cache.getMany(['row-0000'])).toEqual([{ id: 'row-0000', text: 'stored' }]);
    expect(reads).toEqual([]);
    cache.forget('row-0000');
    rows.delete('row-0000');
    expect(await cache.getMany(['row-0000'])).toEqual([]);
    expect(reads).toEqual(['row-0000']);
  });

  it('reads again only a record it was told changed, and leaves out those that are gone', async () => {
    const { rows, reads, cache } = setUp();
    for (const id of ids(3)) rows.set(id, { id, text: 'before' });
    await cache.getMany(ids(3));
    rows.set('row-0001', { id: 'row-0001', text: 'after' });
    rows.delete('row-0002');
    cache.forget('row-0001');
    cache.forget('row-0002');
    expect(await cache.getMany(ids(3))).toEqual([
      { id: 'row-0000', text: 'before' },
      { id: 'row-0001', text: 'after' },
    ]);
    expect(reads.slice(3)).toEqual(['row-0001', 'row-0002']);
    cache.clear();
    await cache.getMany(ids(3));
    expect(reads.slice(5)).toEqual(ids(3));
  });

  it('does not keep a record read while it changed: the read may hold the record before the change', async () => {
    const { rows, reads, hold, release, cache } = setUp();
    rows.set('row-0000', { id: 'row-0000', text: 'before' });
    hold();
    const page = cache.getMany(['row-0000']);
    rows.set('row-0000', { id: 'row-0000', text: 'after' });
    cache.forget('row-0000');
    release();
    // That request answers what it read; the next one reads again.
    expect(await page).toEqual([{ id: 'row-0000', text: 'before' }]);
    expect(await cache.getMany(['row-0000'])).toEqual([{ id: 'row-0000', text: 'after' }]);
    expect(reads).toEqual(['row-0000', 'row-0000']);
  });

  it('keeps records within its budget of bytes, dropping the least recently used first', async () => {
    const record = (id: string) => ({ id, text: 'x'.repeat(1_000) });
    const size = JSON.stringify(record('row-0000')).length;
    // Room for 100 records; the largest kept is a 64th of the budget.
    const { rows, reads, cache } = setUp(size * 100);
    for (const id of ids(150)) rows.set(id, record(id));
    await cache.getMany(ids(100));
    await cache.getMany(['row-0000']);
    await cache.getMany(ids(150).slice(100));
    reads.length = 0;
    await cache.getMany(ids(150));
    // Kept: row-0000 (used again) and the last 99 read; read again: the 50 dropped.
    expect(reads).toEqual(ids(51).slice(1));
  });
});
