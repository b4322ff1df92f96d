/**
 * The first truthy value `probe` returns, checked every 50 ms; throws naming `what` after
 * `timeoutMs`. For conditions a test observes on its own loopback servers, or asks a server about.
 */
export async function until<T>(
  probe: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The status a Temporal workflow closed with (CANCELLED, COMPLETED, ...), once it closed. */
export function closedStatus(
  workflow: { describe(): Promise<{ status: { name: string } }> },
  timeoutMs = 10_000,
): Promise<string> {
  return until(
    async () => {
      const { name } = (await workflow.describe()).status;
      return name === 'RUNNING' ? undefined : name;
    },
    'the workflow closed',
    timeoutMs,
  );
}
