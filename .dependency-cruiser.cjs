// The house's rules, checked by `npm run deps` (part of `npm test`): no circular imports, each
// source folder imports only the folders below it, and workflow code imports nothing but itself
// and the workflow-safe Temporal packages. docs/architecture.md draws the same layers.
//
// LAYERS lists the folders from the bottom up. A folder may import any folder listed before it and
// its own files; importing one listed after it breaks the rule named `<folder> imports only below`.
// A new folder under src/ needs a place here (the rule `every folder has a layer` says so).
const LAYERS = [
  // Foundation: imports nothing of ours.
  ['configuration', '^src/config/'],
  ['workflows', '^workflows/'],
  // Kit: small utilities, the store, logs and metrics, the embedded servers, the HTTP kit.
  ['util', '^src/util/'],
  ['store', '^src/store/'],
  ['ops', '^src/ops/'],
  ['embedded', '^src/embedded/'],
  ['http', '^src/http/'],
  // The web app's files at /app/, with their Content-Security-Policy.
  ['web-app', '^src/web-app/'],
  // Agents' schemas: compiled and checked off the event loop.
  ['user-schemas', '^src/user-schemas/'],
  // Who calls, and how much.
  ['limits', '^src/limits/'],
  ['auth', '^src/auth/'],
  // The protocol clients: every way of calling an agent.
  ['agent-calls', '^src/agent-calls/'],
  // Domain modules.
  ['registry', '^src/registry/'],
  ['capability-import', '^src/capability-import/'],
  ['task-events', '^src/task-events/'],
  ['rooms', '^src/rooms/'],
  ['tasks', '^src/tasks/'],
  ['maps', '^src/maps/'],
  ['schedules', '^src/schedules/'],
  ['room-tasks', '^src/room-tasks/'],
  ['a2a', '^src/a2a/'],
  ['mcp-server', '^src/mcp-server/'],
  ['migrations', '^src/migrations/'],
  // Temporal's adapters over the domain.
  ['activities', '^activities/'],
  // Assembly: the service put together from its parts, and its start.
  ['assembly', '^src/(service/|service\\.ts$|main\\.ts$)'],
  ['entry points', '^(start|server|worker)\\.ts$'],
];

// Tests may import across layers (a unit test starts what it needs); the rules are about the code.
const TESTS = '\\.test\\.ts$';

const layerRules = LAYERS.slice(0, -1).map(([name, path], index) => ({
  name: `${name} imports only below`,
  comment: `${path} is the layer "${name}"; it imports only the layers listed before it in .dependency-cruiser.cjs (docs/architecture.md).`,
  severity: 'error',
  from: { path, pathNot: TESTS },
  to: { path: LAYERS.slice(index + 1).map(([, above]) => above) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no circular imports',
      comment: 'Files that import each other, directly or through others, cannot be read or changed one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'every folder has a layer',
      comment:
        'A source folder or top-level file that .dependency-cruiser.cjs does not name has no layer to be checked against.',
      severity: 'error',
      from: { path: '^(src|activities|workflows)/', pathNot: [TESTS, ...LAYERS.map(([, path]) => path)] },
      to: {},
    },
    {
      name: 'workflow sandbox',
      comment:
        'Workflow code runs in a deterministic sandbox and is bundled alone: it imports only workflows/, @temporalio/workflow and @temporalio/common, not even types from elsewhere.',
      severity: 'error',
      from: { path: '^workflows/', pathNot: TESTS },
      to: {
        pathNot: ['^workflows/', '^node_modules/@temporalio/(workflow|common)/'],
      },
    },
    ...layerRules,
  ],
  options: {
    // Type-only imports count: a layer that needs a type from above is as tied to it as one that calls it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^node_modules/', '^test/fixtures/'] },
    moduleSystems: ['es6', 'cjs'],
  },
};
