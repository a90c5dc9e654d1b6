/**
 * What every activity of a worker shares, built once per worker (./index.ts) and injected into
 * each concern's activities: the cluster's executors, the plan store, the poll and heartbeat periods.
 */
import {
  AllocationLostError,
  SlurmCluster,
  executorForProfile,
  type Executor,
  type LivenessWatch,
} from '@infersweep/slurm';
import type { InfersweepError } from '@infersweep/core';
import type { LoginHost, SweepPlan } from '@infersweep/topology';
import { defaultWorkerSettings, type WorkerSettings } from '../worker-settings';
import { assertAllowed } from './input-checks';
import { PlanStore } from './plans';
import { ServerLostError } from './errors';
import type { Deployment, PlanInput } from './types';

/** How long a cancelled job may stay COMPLETING before release reports it stuck and moves on (ActivityDeps.completingPatienceMs). */
const COMPLETING_PATIENCE_MS = 10 * 60_000;

export interface ActivityDeps {
  /** Executor for a cluster's login host (SSH, or local); one per login host, cached. */
  executorFor(login: LoginHost): Executor;
  /** Poll interval for readiness and allocation/server watch, ms. */
  pollMs: number;
  /** Liveness: every activity heartbeats its latest progress this often, ms (./liveness.ts). */
  heartbeatMs: number;
  /** What this worker allows a sweep input to ask for (../worker-settings.ts), read once at start. */
  settings: WorkerSettings;
  /**
   * How long release waits for a cancelled job to leave COMPLETING before it records the job and its
   * nodes as stuck and moves on, ms (default 10 min; keep it under the release activity's 15-minute
   * start-to-close, ../workflows/activities.ts).
   */
  completingPatienceMs: number;
}

export class ActivityContext {
  readonly plans = new PlanStore();

  constructor(readonly deps: ActivityDeps) {}

  /** The plan of this input and a Slurm client on its cluster. */
  async open(input: PlanInput): Promise<{ plan: SweepPlan; slurm: SlurmCluster }> {
    const plan = await this.plans.resolve(input);
    assertAllowed(plan, input.planRef?.resultsDir, this.deps.settings);
    return { plan, slurm: new SlurmCluster(this.deps.executorFor(plan.login)) };
  }

  /**
   * Watch the allocation and the server steps for the life of an activity: one batched squeue per
   * tick, never overlapping; a failed squeue is `unknown`, never a loss (libs/slurm/src/liveness.ts).
   * `onLoss` gets the typed loss once: Slurm's terminal state, or a step absent on consecutive polls.
   */
  watchDeployment(
    slurm: SlurmCluster,
    dep: Deployment,
    step: string,
    onLoss: (err: InfersweepError) => void,
  ): LivenessWatch {
    const w = slurm.watchLiveness(dep.jobId, dep.steps, { intervalMs: Math.max(500, this.deps.pollMs * 2) });
    void w.loss.then(async (v) => {
      if (!v) return;
      if (v.kind === 'allocation-lost') {
        onLoss(
          new AllocationLostError(`allocation ${dep.jobId} is ${v.state} (${v.reason})`, {
            state: v.state,
            reason: v.reason,
            context: { jobId: dep.jobId, step, node: dep.nodes.join(',') },
          }),
        );
        return;
      }
      const s = dep.steps.find((x) => x.stepName === v.step.stepName) ?? dep.steps[0]!;
      const logs = await slurm.fetchLogs([s], { tailLines: 30 }).catch(() => undefined);
      onLoss(
        new ServerLostError(
          `server step ${s.stepName} on ${s.node} (rank ${s.rank}) gone: not listed by Slurm on ${v.observations} consecutive polls`,
          {
            jobId: dep.jobId,
            node: s.node,
            step,
            logTail: logs?.[0]?.tail ?? '',
          },
        ),
      );
    });
    return w;
  }
}

/** The default deps: executors cached per login host. */
export function defaultDeps(overrides: Partial<ActivityDeps> = {}): ActivityDeps {
  const executors = new Map<string, Executor>();
  return {
    executorFor:
      overrides.executorFor ??
      ((login) => {
        const key = JSON.stringify(login);
        let ex = executors.get(key);
        if (!ex) {
          ex = executorForProfile({ loginHost: login });
          executors.set(key, ex);
        }
        return ex;
      }),
    pollMs: overrides.pollMs ?? 1000,
    heartbeatMs: overrides.heartbeatMs ?? 5000,
    // without settings (tests that build activities directly): the defaults for the plan's `local` cluster
    settings: overrides.settings ?? defaultWorkerSettings('local'),
    completingPatienceMs: overrides.completingPatienceMs ?? COMPLETING_PATIENCE_MS,
  };
}
