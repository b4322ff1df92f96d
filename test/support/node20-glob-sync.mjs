// Lets the MCP conformance harness (@modelcontextprotocol/conformance) run on Node 20. Its CLI
// imports `globSync` from `fs`, which Node adds in 22, and uses it only to summarise results saved
// with --output-dir, which the tests do not ask for. Run it as
// `node --import ./test/support/node20-glob-sync.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js …`.
// Only the harness's own imports of `fs` are redirected: to `fs` with a `globSync` that finds nothing.
import { register } from 'node:module';

register('./node20-glob-sync-hooks.mjs', import.meta.url);
