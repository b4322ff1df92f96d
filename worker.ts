// `npm run worker`: the Temporal worker only, against TEMPORAL_ADDRESS and MONGODB_URI.
import './src/ops/start-tracing';
import { runMain } from './src/main';

runMain({ api: false, worker: true, embedded: false });
