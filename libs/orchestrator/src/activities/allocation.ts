/** Slurm allocations: `salloc --no-shell` under a unique job name per sweep and attempt; release. */
import { Context } from '@temporalio/activity';
import { ClusterUnavailableError, InfersweepError, endOnRelease, remoteSweepLogDir } from '@infersweep/core';
import { SshConnectionError, type SlurmCluster } from '@infersweep/slurm';
import type { ActivityContext } from './context';
import { cancelRequestedByWorkflow } from './interceptor';
import { progress } from './liveness';
import { excludedNodes } from './quarantine';
import type { Allocation, AllocationActivities, ReleaseResult } from './types';

export function allocationActivities(ctx: ActivityContext): AllocationActivities {
  const acts: AllocationActivities = {
    async allocate(input) {
      const { jobName } = input;
      // adopted by name: only a name of this sweep's own (the id of the workflow asking)
      ctx.assertOwnSweep(input.sweepId);
      ctx.assertOwnJobName(jobName);
      const { plan, slurm } = await ctx.open(input);
      // the worker's quarantine (nodes a failure implicated), and an independent replicate's last nodes when
      // the partition has enough others; the quarantine alone when it has not
      const quarantined = await excludedNodes(slurm, plan);
      const avoid = input.avoidNodes ? [...new Set([...input.avoidNodes, ...quarantined])] : undefined;
      const avoided = await excludable(slurm, plan.slurm, avoid);
      const exclude = avoided.length > 0 ? avoided : quarantined;
      const actx = Context.current();
      // a retried attempt (worker redeployed or lost mid-wait) keeps the queue age its last heartbeat reported
      const waitedSecondsBefore = waitedBefore(actx.info.heartbeatDetails, jobName);
      progress({ phase: 'allocating', jobName, waitedSeconds: waitedSecondsBefore });
      const a = await slurm.allocate(
        {
          jobName,
          nodes: plan.slurm.nodes,
          // GPUs are requested only where the profile asks for gres (the local stack shares nodes)
          gpusPerNode: plan.slurm.gres ? plan.slurm.gpusPerNode : undefined,
          gres: plan.slurm.gres,
          exclusive: plan.slurm.exclusive,
          timeLimitMinutes: plan.slurm.timeLimitMinutes,
          partition: plan.slurm.partition,
          account: plan.slurm.account,
          // queue waits of hours: the plan's grant wait; the queued job keeps its place across retries (adopted by name)
          grantTimeoutSeconds: (plan.slurm.grantWaitMinutes ?? 720) * 60,
          logFile: `${remoteSweepLogDir(plan.sharedDir, input.sweepId)}/${jobName}.salloc.log`,
          ...(exclude.length > 0 ? { exclude } : {}),
        },
        {
          // a cancelled sweep withdraws its queued request; a job granted meanwhile is released by name
          signal: actx.cancellationSignal,
          // a worker going away (deploy, detach, timeout) leaves it queued: the next attempt adopts
          // the job by name, with its age and its place in the queue
          keepQueued: () => !cancelRequestedByWorkflow(actx),
          // the pending reason (Resources, Priority, …) and the wait so far, heartbeated for progress
          onProgress: (p) => progress({ phase: 'allocating', ...p }),
          waitedSecondsBefore,
        },
      );
      const allocation: Allocation = {
        jobId: a.jobId,
        jobName,
        nodes: a.nodes,
        headNode: a.headNode,
        timeLimitMinutes: plan.slurm.timeLimitMinutes,
        grantedAt: new Date().toISOString(),
        ...(input.avoidNodes || exclude.length > 0 ? { excluded: exclude } : {}),
      };
      return allocation;
    },

    async release(input) {
      const { jobId, jobName } = input;
      ctx.assertOwnJobName(jobName);
      const { slurm } = await ctx.open(input);
      if (jobId) await ctx.assertOwnJob(slurm, jobId);
      progress({ phase: 'releasing', jobId, jobName });
      const ids = jobId ? [jobId] : (await slurm.jobsNamed(jobName)).map((j) => j.jobId);
      if (ids.length === 0) return { ended: 'released', state: 'GONE', reason: `no job named ${jobName}` };
      let result: ReleaseResult = { ended: 'released', state: 'GONE' };
      for (const id of ids) {
        const before = await slurm.describe(id);
        // the COMPLETING patience counts from the scancel: the settle wait (half of it at most, so the
        // rest is waited with COMPLETING in the progress) is part of it
        const patience = ctx.deps.completingPatienceMs;
        const cancelledAt = Date.now();
        const after = await slurm.release(id, Math.min(patience / 2, RELEASE_SETTLE_MS));
        if (!after.settled && after.state === 'COMPLETING') {
          const stuck = await completingPast(slurm, id, patience, cancelledAt);
          // cancelled, its user processes not yet gone: it can run nothing of ours any more
          if (stuck) {
            result = { ended: 'released', state: 'COMPLETING', reason: stuck };
            continue;
          }
        } else if (!after.settled)
          throw new InfersweepError(`job ${id} still ${after.state} after scancel`, {
            kind: 'transient',
            context: { jobId: id, step: 'release' },
          });
        // live when we came: we released it; already ended: report how Slurm ended it
        result = { ended: endOnRelease(before.state), state: before.state, reason: before.reason || undefined };
        // how long it held its nodes by slurmctld's clock, for the GPU-hour ledger (libs/sweep/src/ledger.ts)
        const held = await slurm.heldSeconds(id).catch(() => null);
        if (held !== null) result.heldSeconds = held;
      }
      return result;
    },
  };
  return { ...acts, allocate: (input) => loginHostAnswers(() => acts.allocate(input)) };
}

/** How long release waits for a cancelled job to settle before it looks at a COMPLETING job's patience (SlurmCluster's default). */
const RELEASE_SETTLE_MS = 60_000;

/**
 * Wait (bounded: `patienceMs` from `since`, its scancel) for a cancelled job to leave COMPLETING.
 * Undefined once it has; else what to record: the job and its nodes (a process they could not kill, a hung GPU: Slurm drains such nodes), so the
 * sweep moves on with a new allocation and the operator knows which nodes to look at.
 */
export async function completingPast(
  slurm: SlurmCluster,
  jobId: string,
  patienceMs: number,
  since = Date.now(),
  pollMs = Math.min(10_000, Math.max(1_000, patienceMs / 10)),
): Promise<string | undefined> {
  const deadline = since + patienceMs;
  let info = await slurm.describe(jobId);
  while (info.state === 'COMPLETING' && Date.now() < deadline) {
    progress({
      phase: 'releasing',
      jobId,
      state: 'COMPLETING',
      waitedSeconds: Math.round((patienceMs - (deadline - Date.now())) / 1000),
    });
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(0, deadline - Date.now()))));
    info = await slurm.describe(jobId);
  }
  if (info.state !== 'COMPLETING') return undefined;
  const nodes = info.nodes.join(',') || '(unknown nodes)';
  const waited = patienceMs >= 60_000 ? `${Math.round(patienceMs / 60_000)} min` : `${Math.round(patienceMs / 1000)} s`;
  return `job ${jobId} still COMPLETING ${waited} after scancel on ${nodes}: released as far as the sweep goes; check those nodes (scontrol show node ${nodes}), Slurm drains a node it cannot clean`;
}

/** The queue time an earlier attempt's last heartbeat reported for this job name (0 when none). */
export function waitedBefore(details: unknown, jobName: string): number {
  if (typeof details !== 'object' || details === null) return 0;
  const d = details as { jobName?: unknown; waitedSeconds?: unknown };
  return d.jobName === jobName &&
    typeof d.waitedSeconds === 'number' &&
    Number.isFinite(d.waitedSeconds) &&
    d.waitedSeconds > 0
    ? d.waitedSeconds
    : 0;
}

/**
 * The nodes an independent replicate may exclude: the last allocation's, when the partition has
 * enough other available nodes for the request (else none: a replicate on the same nodes still runs
 * on a fresh allocation and server).
 */
async function excludable(
  slurm: SlurmCluster,
  req: { partition?: string; nodes: number },
  avoid: string[] | undefined,
): Promise<string[]> {
  if (!avoid || avoid.length === 0) return [];
  const up = await slurm.availableNodes(req.partition);
  return up.filter((n) => !avoid.includes(n)).length >= req.nodes ? avoid : [];
}

/**
 * An allocation whose login host does not answer (the SSH connection refused, timed out or dropped)
 * finds the cluster unavailable: the typed failure a snapshot delays the cell on (libs/core/src/errors.ts).
 */
export async function loginHostAnswers<T>(allocate: () => Promise<T>): Promise<T> {
  try {
    return await allocate();
  } catch (err) {
    if (!(err instanceof SshConnectionError)) throw err;
    throw new ClusterUnavailableError(`login host unreachable: ${err.message}`, {
      context: { ...err.context, step: 'allocate' },
      cause: err,
    });
  }
}
