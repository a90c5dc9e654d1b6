/**
 * What every activity of a worker shares, built once per worker (./index.ts) and injected into
 * each concern's activities: the cluster's executors, the plan store, the poll and heartbeat periods,
 * and the checks that an activity acts only for its own sweep (its workflow's id, its jobs, its folders).
 */
import { Context } from '@temporalio/activity';
import {
  AllocationLostError,
  SlurmCluster,
  executorForProfile,
  type Executor,
  type LivenessWatch,
} from '@infersweep/slurm';
import { posix } from 'node:path';
import { isAllocationOf, remoteSweepLogDir, type InfersweepError } from '@infersweep/core';
import type { LoginHost, SweepPlan } from '@infersweep/topology';
import { defaultWorkerSettings, type WorkerSettings } from '../worker-settings';
import { RefusedInputError, assertAllowed, isUnder } from './input-checks';
import { PlanStore } from './plans';
import { goneStepError } from './gone-step';
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

  /**
   * The plan of this input and a Slurm client on its cluster, reached through the worker's own site
   * profile (never the plan's login). A stored plan is read only from under the results roots.
   */
  async open(input: PlanInput): Promise<{ plan: SweepPlan; slurm: SlurmCluster }> {
    this.assertResultsDir(input.planRef.resultsDir, 'planRef.resultsDir');
    const plan = await this.plans.resolve(input);
    assertAllowed(plan, input.planRef.resultsDir, this.deps.settings);
    const profile = this.deps.settings.clusters[plan.cluster]!; // assertAllowed: the worker serves it
    return { plan, slurm: new SlurmCluster(this.deps.executorFor(profile.loginHost)) };
  }

  /** A folder an activity writes or reads results in: under one of the worker's results roots. */
  assertResultsDir(dir: string, field: string): void {
    if (!this.deps.settings.resultsRoots.some((r) => isUnder(dir, r)))
      throw refused(`${field} = ${JSON.stringify(dir)} is outside this worker's results roots`);
  }

  /**
   * The sweep id an input names is the id of the workflow that scheduled the activity (a sweep's
   * workflow id is its sweep id: ../client.ts, ../workflows/sweep-all.ts), so one sweep cannot act
   * under another's name: its job names, its results folder, its log folders. Outside an activity
   * (tests calling activities directly) there is no workflow to compare with.
   */
  assertOwnSweep(sweepId: string): void {
    const own = callerWorkflowId();
    if (own !== undefined && own !== sweepId)
      throw refused(
        `sweepId = ${JSON.stringify(sweepId)} is not the id of the workflow asking (${JSON.stringify(own)}): a sweep acts only for itself`,
      );
  }

  /** An allocation name this sweep may adopt or release: one of its own (its id's hash is in the name). */
  assertOwnJobName(jobName: string): void {
    const own = callerWorkflowId();
    if (own !== undefined && !isAllocationOf(jobName, own))
      throw refused(
        `jobName = ${JSON.stringify(jobName)} is not an allocation of sweep ${JSON.stringify(own)}: a sweep adopts and releases only its own jobs`,
      );
  }

  /**
   * A job this sweep may act on (launch into, stop steps of, cancel): Slurm names it as one of this
   * sweep's allocations. A job Slurm no longer knows (ended and purged) is nobody's to protect.
   */
  async assertOwnJob(slurm: SlurmCluster, jobId: string): Promise<void> {
    const own = callerWorkflowId();
    if (own === undefined) return;
    const { name } = await slurm.describe(jobId);
    if (name !== '' && !isAllocationOf(name, own))
      throw refused(
        `job ${jobId} (${JSON.stringify(name)}) is not an allocation of sweep ${JSON.stringify(own)}: a sweep acts only on its own jobs`,
      );
  }

  /**
   * A deployment this sweep may poll, stop or copy logs of: its job is this sweep's, its steps run in
   * that job, and their log files lie in this sweep's log folder on the shared dir.
   */
  async assertOwnDeployment(slurm: SlurmCluster, plan: SweepPlan, dep: Deployment): Promise<void> {
    const own = callerWorkflowId();
    if (own === undefined) return;
    const logs = remoteSweepLogDir(plan.sharedDir, own);
    for (const s of dep.steps) {
      if (s.jobId !== dep.jobId)
        throw refused(`deployment step ${s.stepName} is in job ${s.jobId}, the deployment's job is ${dep.jobId}`);
      const rel = posix.relative(logs, posix.normalize(s.logFile));
      if (rel === '' || rel.startsWith('..') || posix.isAbsolute(rel))
        throw refused(
          `deployment step ${s.stepName} logs to ${JSON.stringify(s.logFile)}, outside this sweep's log folder ${logs}`,
        );
    }
    await this.assertOwnJob(slurm, dep.jobId);
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
      onLoss(
        await goneStepError(
          slurm,
          s,
          `server step ${s.stepName} on ${s.node} (rank ${s.rank}) gone: not listed by Slurm on ${v.observations} consecutive polls`,
          { jobId: dep.jobId, node: s.node, step },
        ),
      );
    });
    return w;
  }
}

/** The workflow that scheduled the running activity; undefined outside an activity. */
function callerWorkflowId(): string | undefined {
  try {
    return Context.current().info.workflowExecution?.workflowId;
  } catch {
    return undefined;
  }
}

const refused = (message: string): RefusedInputError => new RefusedInputError(message, { context: { step: 'check' } });

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
