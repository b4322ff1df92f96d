import { SeqBatches } from './seq-batches';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

/** A counter per key whose writes take a tick, as a store's do; every write is kept. */
function counters() {
  const values = new Map<string, number>();
  const writes: Array<{ key: string; count: number }> = [];
  let failNext = false;
  const reserve = async (key: string, count: number) => {
    writes.push({ key, count });
    await tick();
    if (failNext) {
      failNext = false;
      throw new Error('store went away');
    }
    values.set(key, (values.get(key) ?? 0) + count);
    return values.get(key)! - count + 1;
  };
  return { reserve, writes, failOnce: () => (failNext = true) };
}

describe('SeqBatches', () => {
  it('hands those who ask while a write is under way dense, distinct seqs in the order they asked, from one write', async () => {
    const { reserve, writes } = counters();
    const seqs = new SeqBatches(reserve);
    const first = seqs.next('c1');
    const meanwhile = Array.from({ length: 9 }, () => seqs.next('c1'));
    expect(await Promise.all([first, ...meanwhile])).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(writes).toEqual([
      { key: 'c1', count: 1 },
      { key: 'c1', count: 9 },
    ]);
  });

  it('writes the counters of different keys alongside, one write at a time per key', async () => {
    const { reserve, writes } = counters();
    const seqs = new SeqBatches(reserve);
    const taken = await Promise.all(['a', 'b', 'a', 'b', 'a'].map((key) => seqs.next(key)));
    expect(taken).toEqual([1, 1, 2, 2, 3]);
    expect(writes).toEqual([
      { key: 'a', count: 1 },
      { key: 'b', count: 1 },
      { key: 'a', count: 2 },
      { key: 'b', count: 1 },
    ]);
  });

  it('fails only the batch whose write failed, goes on with the next, and forgets a key once served', async () => {
    const { reserve, failOnce } = counters();
    const seqs = new SeqBatches(reserve);
    failOnce();
    const failed = seqs.next('c1');
    const next = [seqs.next('c1'), seqs.next('c1')];
    await expect(failed).rejects.toThrow('store went away');
    expect(await Promise.all(next)).toEqual([1, 2]);
    expect((seqs as unknown as { waiting: Map<string, unknown> }).waiting.size).toBe(0);
    expect(await seqs.next('c1')).toBe(3);
  });
});
