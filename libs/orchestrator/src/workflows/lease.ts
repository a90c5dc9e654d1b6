/**
 * Lease: what a sweep holds on the cluster between points, an allocation and the server on it, and
 * the verbs that get, use up and give back what it holds: ensure a server, apply the deployment
 * policy, stop the server, capture its logs, tear down, release a held job. Its data is one
 * snapshot object: continue-as-new carries a copy and the next run starts from it, so a continued
 * run holds exactly what the last one held (the same job, the same ready server, the image already
 * imported on that job). Workflow code: deterministic, all work in activities.
 */
import { ApplicationFailure, CancellationScope, isCancellation } from '@temporalio/workflow';
import {
  ledgerStart,
  ledgerStop,
  recordAllocationEnd,
  recordAllocationGranted,
  recordAllocationReleased,
  type AllocationEnd,
  type GpuLedger,
  type SweepInput,
  type SweepPhase,
  type SweepProgress,
} from '@infersweep/sweep';
import { allocationJobName, CLUSTER_UNAVAILABLE, ResultsLayout } from '@infersweep/core';
import type { Allocation, Deployment, PlanInput, ReleaseResult } from '../activities/types';
import type { LeaseSnapshot } from './carry-over';
import { planOf, type SweepVerbs } from './activities';
import { classify, messageOf } from './failures';

/** The failure type a sweep ends with when it could not release a job it holds (never retried). */
export const RELEASE_FAILED = 'ReleaseFailed';

/** The sweep holding the lease (./run.ts): the progress it records in, publishes and asks the operator through. */
export interface LeaseHolder {
  readonly state: SweepProgress;
  readonly aborted: boolean;
  publish(phase?: SweepPhase, message?: string): void;
  readonly operator: { wait(reason: string, on: 'release'): Promise<boolean> };
  /** nodes the next allocation avoids (independent replicates); undefined: any */
  avoidNodes(): string[] | undefined;
}

const now = () => new Date().toISOString();

export class Lease {
  private readonly data: LeaseSnapshot;
  private readonly plan: PlanInput;
  private readonly layout: ResultsLayout;
  /** allocation, image import, launch and readiness: cancelled by abort too */
  private setupScope?: CancellationScope;

  constructor(
    private readonly run: LeaseHolder,
    private readonly input: SweepInput,
    private readonly act: SweepVerbs,
    from?: LeaseSnapshot,
  ) {
    // every field in one order, whatever the carried snapshot left out (a snapshot is a copy of this)
    this.data = {
      allocation: undefined,
      deployment: undefined,
      serverIndex: 0,
      serverUsed: false,
      pointsOnAllocation: 0,
      importedOnJob: undefined,
      ...from,
    };
    this.plan = planOf(input);
    this.layout = new ResultsLayout(input.resultsDir);
  }

  /** What is held now (read-only: the verbs below change it). */
  get held(): Readonly<LeaseSnapshot> {
    return this.data;
  }

  /** What continue-as-new carries. */
  snapshot(): LeaseSnapshot {
    return { ...this.data };
  }

  /** A point ran on the server. */
  pointDone(): void {
    this.data.serverUsed = true;
    this.data.pointsOnAllocation += 1;
  }

  /** An allocation (a new attempt if there is none) and a ready server on it (cancellable by the abort update). */
  async ensureServer(): Promise<void> {
    this.setupScope = new CancellationScope();
    try {
      await this.setupScope.run(() => this.setUp());
    } finally {
      this.setupScope = undefined;
    }
  }

  /** The abort update: stop setting up (the allocation attempt, image import, launch or readiness wait). */
  cancelSetup(): void {
    this.setupScope?.cancel();
  }

  private async setUp(): Promise<void> {
    if (!this.data.allocation) await this.allocate();
    const alloc = this.data.allocation!;
    if (this.data.deployment) return;
    const { sweepId, resultsDir } = this.input;
    if (this.input.importImage && this.input.importImageOn === 'head-node' && this.data.importedOnJob !== alloc.jobId) {
      // InferenceX's way: on the allocation's head compute node (one import per squash file, under a lock)
      this.run.publish('importing-image', `on ${alloc.headNode} of job ${alloc.jobId}`);
      this.ledger((l) => ledgerStart(l, alloc.jobId, 'imageImport', Date.now()));
      await this.act.importImage({ ...this.plan, sweepId, allocation: alloc });
      this.data.importedOnJob = alloc.jobId;
    }
    // counted before it launches, so a retried launch reuses no index
    const serverIndex = (this.data.serverIndex += 1);
    this.run.publish('launching', `server ${serverIndex} on job ${alloc.jobId} (${alloc.nodes.join(',')})`);
    this.ledger((l) => ledgerStart(l, alloc.jobId, 'modelLoad', Date.now()));
    const deployment = await this.act.launchServer({
      ...this.plan,
      sweepId,
      allocation: alloc,
      serverIndex,
      resultsDir,
    });
    this.data.deployment = deployment;
    if (deployment.speedMultiplier !== undefined) {
      const rec = this.run.state.allocations.find((x) => x.jobId === alloc.jobId);
      if (rec) rec.speedMultiplier = deployment.speedMultiplier;
    }
    this.run.publish('waiting-ready');
    await this.act.waitReady({ ...this.plan, deployment, startupBudgetSeconds: this.input.startupBudgetSeconds });
    this.ledger((l) => ledgerStop(l, alloc.jobId, Date.now()));
    this.data.deployment = deployment;
    this.data.serverUsed = false;
  }

  private async allocate(): Promise<void> {
    const state = this.run.state;
    const attempt = state.allocations.length + 1;
    const jobName = allocationJobName(this.input.sweepId, attempt, this.input.deploymentTag);
    state.allocations.push({ attempt, jobName, nodes: [], requestedAt: now() });
    this.run.publish('allocating', `allocation attempt ${attempt}`);
    let a: Allocation;
    try {
      const avoidNodes = this.run.avoidNodes();
      a = await this.act.allocate({
        ...this.plan,
        sweepId: this.input.sweepId,
        jobName,
        attempt,
        ...(avoidNodes ? { avoidNodes } : {}),
      });
    } catch (err) {
      // the attempt counts before anything else can fail (an unreachable cluster reaches the operator wait)
      const why = isCancellation(err) && this.run.aborted ? `aborted: ${state.abortRequested}` : messageOf(err);
      recordAllocationEnd(state, jobName, isCancellation(err) ? 'released' : 'allocation-failed', why, now());
      // the attempt found the cluster unavailable (a typed failure, libs/core/src/errors.ts): the sweep's failure says so
      const rec = state.allocations.find((x) => x.jobName === jobName);
      if (rec && classify(err).type === CLUSTER_UNAVAILABLE) rec.clusterUnavailable = true;
      // never leak, cancelled or not: whatever was queued or granted under this name is released (the
      // allocate activity withdrew its request first: it is waited for, WAIT_CANCELLATION_COMPLETED);
      // a release that keeps failing waits for the operator like any other (releaseHeld)
      await CancellationScope.nonCancellable(() => this.releaseHeld({ jobName }));
      throw err;
    }
    this.data.allocation = a;
    this.data.pointsOnAllocation = 0;
    recordAllocationGranted(state, attempt, a, this.input.plan.slurm.nodes * this.input.plan.slurm.gpusPerNode);
  }

  /** The deployment policy after a point: keep the server, restart it, or release the allocation. */
  async applyPolicy(): Promise<void> {
    const { policy, pointsPerAllocation } = this.input;
    if (policy === 'server-per-point') await this.stopServer('policy');
    if (policy === 'allocation-per-point') await this.teardown('released', 'policy: fresh allocation per point');
    else if (
      pointsPerAllocation !== undefined &&
      this.data.allocation &&
      this.data.pointsOnAllocation >= pointsPerAllocation
    ) {
      await this.teardown('released', `policy: ${pointsPerAllocation} point(s) per allocation`);
    }
  }

  /** Stop the server (its logs captured first); the allocation is kept. Never cancelled. */
  async stopServer(reason: string): Promise<void> {
    const dep = this.dropServer();
    if (!dep) return;
    await CancellationScope.nonCancellable(async () => {
      await this.captureLogs(dep, reason);
      await this.act.stopServer({ ...this.plan, deployment: dep });
    });
  }

  /** Release the allocation (and stop/capture the server first); idempotent, never cancelled. */
  async teardown(ended: AllocationEnd, reason: string | undefined): Promise<void> {
    await CancellationScope.nonCancellable(async () => {
      const state = this.run.state;
      const a = this.data.allocation;
      const dep = this.dropServer();
      if (dep) {
        await this.captureLogs(dep, reason ?? ended);
        await this.act.stopServer({ ...this.plan, deployment: dep }).catch(() => undefined);
      }
      if (a) {
        const r = await this.releaseHeld(a);
        // Slurm's own terminal state (CANCELLED, NODE_FAIL, TIMEOUT, …) wins over the caller's (released,
        // insufficient-time, server-lost, …); forgotten only now that its release succeeded (see releaseHeld)
        recordAllocationReleased(state, a, r, { ended, reason, at: now(), atMs: Date.now() });
        if (r.state === 'COMPLETING' && r.reason) this.warn(a.jobId, r.reason);
        this.data.allocation = undefined;
        state.allocation = undefined;
      }
    });
  }

  /** Forget the server (it is being stopped); its deployment, if any, for the caller to stop. */
  private dropServer(): Deployment | undefined {
    const dep = this.data.deployment;
    this.data.deployment = undefined;
    this.data.serverUsed = false;
    return dep;
  }

  /**
   * Copy a server's logs before it stops. A failed capture is a missing log, never a reason to
   * release a healthy allocation: it is noted on the allocation's record and in the progress message.
   */
  private async captureLogs(dep: Deployment, reason: string): Promise<void> {
    try {
      await this.act.captureLogs({
        ...this.plan,
        deployment: dep,
        destDir: this.layout.serverLogsDir(dep.serverIndex),
        reason,
      });
    } catch (err) {
      this.warn(
        dep.jobId,
        `log capture of server ${dep.serverIndex} on job ${dep.jobId} failed (its logs are missing): ${messageOf(err)}`,
      );
    }
  }

  /** The GPU-hour ledger's step (libs/sweep/src/ledger.ts), when the sweep keeps one. */
  private ledger(step: (l: GpuLedger) => void): void {
    const l = this.run.state.ledger;
    if (l) step(l);
  }

  /** A warning on an allocation's record and in the progress message. */
  private warn(jobId: string, warning: string): void {
    const rec = this.run.state.allocations.find((a) => a.jobId === jobId);
    if (rec) rec.warnings = [...(rec.warnings ?? []), warning];
    this.run.publish(undefined, warning);
  }

  /**
   * Release a job the sweep holds; it is never forgotten. A release that keeps failing (its activity
   * out of retries: login node unreachable, scancel failing) waits for the operator, the job still
   * recorded, and retryNow tries again. An abort, a cancel of the workflow or no answer in time gets
   * one last try; if that fails too, the allocation ends `release-failed` with the job id in its
   * reason and the sweep fails with that message (RELEASE_FAILED), never silently.
   */
  private async releaseHeld(a: { jobId?: string; jobName: string }): Promise<ReleaseResult> {
    const release = () => this.act.release({ ...this.plan, jobId: a.jobId, jobName: a.jobName });
    // a request whose job id was never seen (a failed allocate) is released by name
    const clear = a.jobId ? `scancel ${a.jobId}` : `scancel --me --name=${a.jobName}`;
    const job = a.jobId ? `job ${a.jobId} (${a.jobName})` : `the jobs named ${a.jobName}`;
    for (;;) {
      let failed: string;
      try {
        return await release();
      } catch (err) {
        failed = `release of ${job} failed: ${messageOf(err)}`;
      }
      const retry = await this.run.operator.wait(
        `${failed}; clear it by hand: ${clear}, then infersweep resume ${this.input.sweepId}`,
        'release',
      );
      if (retry) continue;
      try {
        return await release();
      } catch (err) {
        const reason = `${failed}; the last try failed too: ${messageOf(err)}. ${job.charAt(0).toUpperCase()}${job.slice(1)} may still hold its nodes: ${clear}`;
        recordAllocationEnd(this.run.state, a.jobName, 'release-failed', reason, now());
        // state.allocation keeps showing the job; this run stops trying (close() has nothing left to release)
        this.data.allocation = undefined;
        throw ApplicationFailure.nonRetryable(reason, RELEASE_FAILED, {
          kind: 'fatal',
          input: false,
          jobId: a.jobId,
          jobName: a.jobName,
        });
      }
    }
  }
}
