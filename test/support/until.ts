/**
 * How long a test waits for something it expects before it calls it stuck. Generous on purpose: on a
 * machine busy with other work everything takes several times as long as on a quiet one, and a wait
 * that ends early costs nothing, so only a condition that never comes waits it out.
 */
export const STUCK_AFTER_MS = 60_000;

/**
 * The first truthy value `probe` returns, checked every `intervalMs`; throws naming `what` after
 * `timeoutMs`. For conditions a test observes on its own loopback servers, or asks a server about.
 */
export async function until<T>(
  probe: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  what: string,
  timeoutMs = STUCK_AFTER_MS,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The status a Temporal workflow closed with (CANCELLED, COMPLETED, ...), once it closed. */
export function closedStatus(
  workflow: { describe(): Promise<{ status: { name: string } }> },
  timeoutMs = STUCK_AFTER_MS,
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
