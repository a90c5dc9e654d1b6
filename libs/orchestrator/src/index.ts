/**
 * @infersweep/orchestrator: the Temporal side of infersweep. Workflows (sweep, sweep-all), the
 * activities, the worker factory, the connection to Temporal, the client helpers the CLI uses to
 * start and find sweeps, and the config-file adapter. See libs/orchestrator/README.md.
 */
export * from './worker';
export * from './worker-settings';
export * from './connection';
export * from './config-file';
export { bundlerOptions, workflowsPath } from './bundle';
export * from './client';
export type * from './activities/types';
export * from './temporal-tls';
export * from './namespace-check';
