// `npm run server`: the HTTP and WebSocket API only, against TEMPORAL_ADDRESS and MONGODB_URI.
import './src/ops/start-tracing';
import { runMain } from './src/main';

runMain({ api: true, worker: false, embedded: false });
