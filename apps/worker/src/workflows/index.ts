export { sweepWorkflow } from './sweep';
export { sweepAllWorkflow } from './sweep-all';
