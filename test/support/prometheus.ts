import { call } from './http';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments and blank lines left out). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[label[1]] = label[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The families a text exposition declares (`# TYPE` lines), with their types. */
export function declaredFamilies(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1], match[2]]));
}

/** GET /metrics of the service under test (or `baseUrl`), parsed; the text too. */
export async function scrape(baseUrl?: string): Promise<{ text: string; samples: Sample[] }> {
  const reply = await call('GET', '/metrics', { baseUrl });
  if (reply.status !== 200) throw new Error(`GET /metrics answered ${reply.status}`);
  const text = reply.body as string;
  return { text, samples: parseExposition(text) };
}

/** The sum of the samples named `name` whose labels include `labels`: 0 when there are none. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}
