// The module-resolution hook node20-glob-sync.mjs registers: within the conformance harness, `fs`
// is Node's `fs` with a `globSync` that finds nothing (Node 20 has none).
const FS_WITH_GLOB_SYNC = `data:text/javascript,${encodeURIComponent(
  "import fs from 'node:fs'; export * from 'node:fs'; export default fs; export function globSync() { return []; }",
)}`;

export async function resolve(specifier, context, next) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL?.includes('/@modelcontextprotocol/conformance/')
  )
    return { url: FS_WITH_GLOB_SYNC, shortCircuit: true };
  return next(specifier, context);
}
