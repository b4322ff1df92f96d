/**
 * A resource for the file's tests: `start`ed before them, `stop`ped after. Call the returned function
 * inside tests; outside them it throws, naming `what`.
 */
export function useForFile<T>(
  what: string,
  start: () => Promise<T>,
  stop: (resource: T) => Promise<unknown>,
  startTimeoutMs?: number,
): () => T {
  let resource: T | undefined;
  beforeAll(async () => {
    resource = await start();
  }, startTimeoutMs);
  afterAll(async () => {
    if (resource !== undefined) await stop(resource);
  });
  return () => {
    if (resource === undefined) throw new Error(`${what} is there only inside tests`);
    return resource;
  };
}
