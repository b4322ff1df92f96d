// Workflows the task worker runs. Deterministic code only: no Node modules, no I/O (see activities/).
export { compositionWorkflow } from './composition';
export { mapWorkflow } from './map-workflow';
export { mapChunkWorkflow } from './map-chunk-workflow';
export { scheduledRunWorkflow } from './scheduled-run';
