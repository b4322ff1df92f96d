import { itemsPerChunk, planMap } from './map-plan';

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('planMap', () => {
  it('cuts about four chunks per unit of concurrency, within the chunk bounds', () => {
    expect(itemsPerChunk(10_000, 10, 256)).toBe(250);
    expect(itemsPerChunk(10_000, 1, 256)).toBe(256);
    expect(itemsPerChunk(20, 10, 256)).toBe(8);
    expect(itemsPerChunk(1, 100, 256)).toBe(8);
  });

  it('covers every item once, in order, each chunk within its size', () => {
    const { chunks } = planMap(1_001, 10, 256);
    expect(chunks[0]).toEqual({ from: 0, to: 25 });
    expect(chunks.at(-1)).toEqual({ from: 988, to: 1_000 });
    chunks.forEach((chunk, i) => {
      expect(chunk.from).toBe(i === 0 ? 0 : chunks[i - 1].to + 1);
      expect(chunk.to - chunk.from + 1).toBeLessThanOrEqual(26);
    });
  });

  it('gives every lane a share, the shares summing to maxConcurrency', () => {
    const layout = planMap(20, 10, 256);
    expect(layout.chunks).toEqual([
      { from: 0, to: 7 },
      { from: 8, to: 15 },
      { from: 16, to: 19 },
    ]);
    expect(layout.shares).toEqual([4, 3, 3]);
    expect(sum(planMap(10_000, 100, 256).shares)).toBe(100);
    expect(planMap(10_000, 100, 256).shares).toHaveLength(100);
  });

  it('runs a single item in one chunk of one lane holding the whole concurrency', () => {
    expect(planMap(1, 10, 256)).toEqual({ chunks: [{ from: 0, to: 0 }], shares: [10] });
  });
});
