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
export type { ActivityDeps } from './activities';
export { HEARTBEAT_TIMEOUT_SECONDS } from './workflows/activities';
// the error taxonomy of the Temporal side: the errors activities raise, how a failure crosses to the
// workflow, how the workflow classifies it (apps/cli/test/error-taxonomy.test.ts has one row per class)
export { InsufficientTimeError, InvalidPlanError, PlanUnreadableError, ServerLostError } from './activities/errors';
export { ProgressStalledError } from './activities/liveness';
export { QuarantineBlocksError } from './activities/quarantine';
export { RefusedInputError } from './activities/input-checks';
export { toFailure } from './activities/interceptor';
export { classify, lossEnd, type FailureClass } from './workflows/failures';
export * from './temporal-tls';
export { openQuarantine, type QuarantineEntry } from './quarantine';
export * from './namespace-check';
export { LOCAL_IMAGES_ENV } from './activities/local-images';
