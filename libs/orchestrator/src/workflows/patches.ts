/**
 * Versioning (docs/deploy.md "Deploying a new worker while sweeps run"): code paths that change the
 * commands a running sweep records are guarded by `patched(id)`; the stored histories in
 * libs/orchestrator/test/fixtures/histories must keep replaying (libs/orchestrator/test/replay.test.ts).
 */
export const PATCHES = {
  /** activities get {planHash, resultsDir} instead of the ~11 KB plan (activities/plans.ts) */
  planByReference: 'plan-by-reference',
  /** a release that keeps failing waits for the operator instead of failing the sweep (releaseHeld) */
  releaseWaitsForOperator: 'release-waits-for-operator',
  /** a long activity whose retries only worker shutdowns spent is scheduled again (./activities.ts) */
  outlastWorkerShutdowns: 'outlast-worker-shutdowns',
  /** abort cancels the allocation, launch and readiness too, not only a running point */
  abortInAnyPhase: 'abort-in-any-phase',
  /** the release by name after a failed or cancelled allocate waits for the operator like any release (releaseHeld) */
  releaseByNameHeld: 'release-by-name-held',
  /** a server lost during a point fails a point attempt and keeps the allocation, instead of replacing it */
  serverLossFailsPoint: 'server-loss-fails-point',
  /** a cancelled allocate releases whatever it queued or was granted under its name */
  releaseOnCancelledAllocate: 'release-on-cancelled-allocate',
  /** a completed sweep records its points in the history and upserts its verdict (InfersweepRegression) */
  historyVerdict: 'history-verdict',
} as const;
