/**
 * @infersweep/sweep (pure, workflow-safe): the sweep contract the workflow, the activities and the
 * CLI agree on (input, progress, point states, messages, search attributes) and the point-state
 * machine. See libs/sweep/README.md.
 */
export * from './contract';
export * from './state';
export * from './messages';
export * from './search';
export * from './limit';
export * from './replicates';
export * from './attempt-decision';
export * from './ledger';
export * from './confirm';
export * from './snapshot';
