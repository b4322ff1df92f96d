/** Latencies and wall time of some runs of one job. */
export interface Sample {
  latencies: number[];
  wallSeconds: number;
}

/** Runs `total` jobs, `concurrency` at a time: each one's latency in ms, and the wall time of all. */
export async function sample(
  total: number,
  concurrency: number,
  job: (n: number) => Promise<unknown>,
): Promise<Sample> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const n = next++;
        const begun = performance.now();
        await job(n);
        latencies.push(performance.now() - begun);
      }
    }),
  );
  return { latencies, wallSeconds: (performance.now() - started) / 1000 };
}
