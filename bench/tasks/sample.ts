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

/** Throughput, in jobs per second over the wall time, and latencies in ms. */
export interface Measurement {
  throughput: number;
  p50: number;
  p99: number;
}

/** The samples of one variant taken together. */
export function summarise(samples: Sample[]): Measurement {
  const latencies = samples.flatMap((one) => one.latencies).sort((a, b) => a - b);
  const wallSeconds = samples.reduce((sum, one) => sum + one.wallSeconds, 0);
  const at = (share: number) => latencies[Math.min(latencies.length - 1, Math.floor(share * latencies.length))];
  return { throughput: latencies.length / wallSeconds, p50: at(0.5), p99: at(0.99) };
}
