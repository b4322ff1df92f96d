import { KeyedQueue } from './keyed-queue';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('KeyedQueue', () => {
  it('runs the calls of one key one at a time, in order, and those of other keys alongside', async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const step = (name: string) => async () => {
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([
      queue.run('a', step('a1')),
      queue.run('a', step('a2')),
      queue.run('b', step('b1')),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b1']);
    expect(log.indexOf('a1 end')).toBeLessThan(log.indexOf('a2 start'));
    expect(log.indexOf('b1 start')).toBeLessThan(log.indexOf('a1 end'));
  });

  it('goes on with the next call after one failed, and forgets a key once its calls ended', async () => {
    const queue = new KeyedQueue();
    const failed = queue.run('a', () => Promise.reject(new Error('no')));
    const next = queue.run('a', () => Promise.resolve('yes'));
    await expect(failed).rejects.toThrow('no');
    await expect(next).resolves.toBe('yes');
    await tick();
    expect((queue as unknown as { tails: Map<string, unknown> }).tails.size).toBe(0);
  });
});
