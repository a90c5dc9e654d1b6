/**
 * The GPU-hour ledger's inputs from the workflow (libs/sweep/src/ledger.ts holds the ledger itself): the
 * plan's worst case to read it beside, and the phases a point's activity measured. Workflow code.
 */
import { worstCaseGpuSeconds, type PointSummary } from '@infersweep/sweep';
import type { SweepRunInput } from './carry-over';

/** The plan's worst case in GPU-seconds (libs/sweep/src/ledger.ts), for the ledger to be read beside. */
export function planWorstCase(input: SweepRunInput): number {
  const g = input.plan.slurm.nodes * input.plan.slurm.gpusPerNode;
  const gpus = Number.isFinite(g) && g > 0 ? g : 0;
  const s = input.search;
  return worstCaseGpuSeconds({
    gpus,
    points: input.points.length,
    maxPointAttempts: input.maxPointAttempts,
    pointBudgetSeconds: input.pointBudgetSeconds,
    maxAllocationAttempts: input.maxAllocationAttempts,
    startupBudgetSeconds: input.startupBudgetSeconds,
    ...(s && s.maxAddedPoints !== undefined && s.pointGpuHours !== undefined
      ? { search: { maxAddedPoints: s.maxAddedPoints, pointGpuHours: s.pointGpuHours } }
      : {}),
  });
}

/** The drain and warm-up seconds a point's activity measured (the ledger splits the point's time by them). */
export function phaseSeconds(s: PointSummary): { drainSeconds?: number; warmupSeconds?: number } {
  return {
    ...(s.phaseSeconds?.drain === undefined ? {} : { drainSeconds: s.phaseSeconds.drain }),
    ...(s.phaseSeconds?.warmup === undefined ? {} : { warmupSeconds: s.phaseSeconds.warmup }),
  };
}
