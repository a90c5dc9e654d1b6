/**
 * Liveness of an allocation and its server steps, judged on evidence ("a loss needs
 * evidence"): one batched observation per tick (LIVENESS_SCRIPT: the job row, its steps and the
 * launcher pids in one round trip), never overlapping; a failed `squeue` is `unknown` and never a
 * loss; a loss is Slurm's own terminal state, or the same absence seen on consecutive ticks.
 */
import { isLive, type JobRow, type JobState, type LivenessObservation } from './parse';

export interface WatchedStep {
  stepName: string;
  node: string;
  /** pid of the detached srun on the login node (covers the moment before squeue lists the step). */
  launcherPid?: number;
}

export type LivenessVerdict =
  | { kind: 'alive'; job: JobRow; suspect: string | null }
  | { kind: 'unknown'; streak: number; error: string }
  | { kind: 'allocation-lost'; state: JobState; reason: string }
  | { kind: 'step-lost'; step: WatchedStep; observations: number };

export interface LivenessJudgeOptions {
  /** Consecutive ticks on which slurmctld no longer knows the job before it counts as GONE (default 2). */
  goneObservations?: number;
  /** Consecutive ticks on which a step is absent (and its launcher dead) before it counts as lost (default 3). */
  stepMissingObservations?: number;
}

/** Pure: feeds on observations, answers with a verdict. Keeps the streaks that make a loss "consistent". */
export class LivenessJudge {
  private unknownStreak = 0;
  private goneStreak = 0;
  private readonly missing = new Map<string, number>();
  private readonly goneNeeded: number;
  private readonly missingNeeded: number;

  constructor(
    private readonly steps: readonly WatchedStep[],
    opts: LivenessJudgeOptions = {},
  ) {
    this.goneNeeded = opts.goneObservations ?? 2;
    this.missingNeeded = opts.stepMissingObservations ?? 3;
  }

  observe(o: LivenessObservation): LivenessVerdict {
    if (!o.job.ok) {
      this.unknownStreak += 1;
      return { kind: 'unknown', streak: this.unknownStreak, error: o.job.error };
    }
    if (o.job.gone || !o.job.row) {
      this.goneStreak += 1;
      this.unknownStreak = 0;
      if (this.goneStreak >= this.goneNeeded)
        return {
          kind: 'allocation-lost',
          state: 'GONE',
          reason: `unknown to slurmctld on ${this.goneStreak} consecutive polls`,
        };
      return {
        kind: 'unknown',
        streak: this.goneStreak,
        error: 'job not listed by squeue (waiting for a second observation)',
      };
    }
    this.goneStreak = 0;
    this.unknownStreak = 0;
    const row = o.job.row;
    // Slurm's own word: anything but RUNNING means the nodes are no longer ours to use
    if (row.state !== 'RUNNING')
      return {
        kind: 'allocation-lost',
        state: row.state,
        reason: row.reason && row.reason !== 'None' ? row.reason : isLive(row.state) ? 'not running' : 'ended',
      };
    if (!o.steps.ok) return { kind: 'alive', job: row, suspect: `steps unknown: ${o.steps.error}` };
    const present = new Set(o.steps.rows.map((r) => r.name));
    let suspect: string | null = null;
    for (const s of this.steps) {
      const seen = present.has(s.stepName) || (s.launcherPid !== undefined && o.launchers[s.launcherPid] === true);
      const n = seen ? 0 : (this.missing.get(s.stepName) ?? 0) + 1;
      this.missing.set(s.stepName, n);
      if (n >= this.missingNeeded) return { kind: 'step-lost', step: s, observations: n };
      if (n > 0) suspect = `step ${s.stepName} on ${s.node} not listed (${n}/${this.missingNeeded})`;
    }
    return { kind: 'alive', job: row, suspect };
  }
}
