/** The workflow bundle's entry (libs/orchestrator/src/bundle.ts): the workflow types a worker registers. */
export { sweepWorkflow } from './sweep';
export { sweepAllWorkflow } from './sweep-all';
export { confirmWorkflow } from './confirm';
export { snapshotWorkflow } from './snapshot';
