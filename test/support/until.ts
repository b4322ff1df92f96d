/**
 * The first truthy value `probe` returns, checked every 50 ms; throws naming `what` after
 * `timeoutMs`. For conditions a test observes on its own loopback servers.
 */
export async function until<T>(probe: () => T | undefined | false | null, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
