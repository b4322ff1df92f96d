// `npm start`: the whole service in one process, on the embedded Temporal dev server and FerretDB
// unless TEMPORAL_ADDRESS / MONGODB_URI point elsewhere. Development defaults allow loopback agents.
import './src/ops/start-tracing';
import { runMain } from './src/main';

runMain({
  api: true,
  worker: true,
  embedded: true,
  envDefaults: { ALLOW_INSECURE_AGENT_URLS: 'true', ALLOW_PRIVATE_AGENT_URLS: 'true' },
});
