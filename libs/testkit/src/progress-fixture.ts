import type { SweepProgress } from '@infersweep/sweep';

/** A fresh sweep's progress with the planned points pending (search tests). */
export const progress = (planned: number[]): SweepProgress => ({
  sweepId: 's',
  configName: 'c',
  configHash: 'h',
  planHash: 'p',
  orientation: 'balanced',
  cluster: 'local',
  model: 'm',
  policy: 'shared-server',
  maxAllocationAttempts: 3,
  resultsDir: '/r',
  phase: 'starting',
  points: planned.map((concurrency) => ({ concurrency, status: 'pending', attempts: 0 })),
  allocations: [],
  startedAt: 't0',
  updatedAt: 't0',
});
