/**
 * The replicated points of a sweep as the report, `results --json/--csv` and the InferenceX
 * sidecar show them: per point the mean over allocations with its 95 % CI per metric, n, why it
 * stopped, and the between-allocation share (libs/stats varianceSplit on the per-request
 * interactivity, 1000 / ITL ms, of the profiled requests, grouped by replicate).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { POINT_REQUESTS_FILE } from '@infersweep/core';
import { readRequestRecords } from '@infersweep/agentx';
import type { ReplicateMetric } from '@infersweep/topology';
import {
  betweenAllocationShare,
  type ReplicateStat,
  type ReplicationStatus,
  type SweepProgress,
} from '@infersweep/sweep';

export interface ReplicateRow {
  concurrency: number;
  n: number;
  status: ReplicationStatus;
  /** why it stopped short, or that the target was not met within max */
  note: string | null;
  stats: Partial<Record<ReplicateMetric, ReplicateStat>>;
  /** τ² / (τ² + σ²/m) of the per-request interactivity; null without request files for ≥ 2 replicates */
  betweenShare: number | null;
  jobIds: string[];
  resultPaths: string[];
}

/** The replicate rows of a sweep's progress; null when the sweep has no replicates (yet). */
export function replicateRowsOf(prog: SweepProgress | undefined): ReplicateRow[] | null {
  if (!prog?.replicates) return null;
  return prog.replicates.points.map((rp) => ({
    concurrency: rp.concurrency,
    n: rp.replicates.length,
    status: rp.status,
    note: rp.note ?? null,
    stats: rp.stats,
    betweenShare: shareOf(rp.replicates.map((x) => x.resultPath)),
    jobIds: rp.replicates.map((x) => x.jobId),
    resultPaths: rp.replicates.map((x) => x.resultPath),
  }));
}

function shareOf(resultPaths: string[]): number | null {
  try {
    const groups = resultPaths.map((p) => {
      const file = join(dirname(p), POINT_REQUESTS_FILE);
      if (!existsSync(file)) return [];
      return readRequestRecords(file)
        .filter((r) => r.phase === 'profiling' && r.ok && typeof r.itl_ms === 'number' && r.itl_ms > 0)
        .map((r) => 1000 / r.itl_ms!);
    });
    return betweenAllocationShare(groups) ?? null;
  } catch {
    return null;
  }
}
