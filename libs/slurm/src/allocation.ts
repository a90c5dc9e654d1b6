/**
 * An allocation: `salloc --no-shell` detached on the login node under a unique job name, followed by
 * name until granted, adopted by name when an activity is retried, withdrawn on request.
 */
import { ClusterUnavailableError, tail, type ErrorContext } from '@infersweep/core';
import { AllocationError, CommandAbortedError } from './errors';
import {
  DEFAULT_GRANT_TIMEOUT_SECONDS,
  killLauncherArgv,
  sallocDetachedArgv,
  sallocLogFile,
  sinfoNodesArgv,
  type AllocateRequest,
} from './commands';
import {
  isLive,
  parseNodeStates,
  parseSalloc,
  partitionDown,
  pendingReasonIsPermanent,
  sallocIsPermanent,
  type JobRow,
} from './parse';
import { fetchLogs } from './logs';
import { setupErrorOf, sleep, type SlurmQueries } from './queries';

/** The Slurm job allocate was granted (or adopted): id, name, nodes (the sweep's record of it is the orchestrator's Allocation). */
export interface GrantedJob {
  jobId: string;
  jobName: string;
  nodes: string[];
  headNode: string;
  /** true when an existing job of this name was adopted instead of a new salloc. */
  adopted: boolean;
}

/** What allocate reports while it waits (the activity heartbeats it; the CLI shows the reason). */
export interface AllocationProgress {
  jobName: string;
  jobId?: string;
  /** `submitting` until squeue lists the job, then Slurm's state (PENDING, CONFIGURING, …). */
  state: string;
  /** Slurm's pending reason (Resources, Priority, QOSMaxJobsPerUserLimit, …). */
  reason?: string;
  waitedSeconds: number;
  /** true when an earlier submission of this name (a retried activity) is kept instead of a new salloc. */
  adoptedPending: boolean;
  /** The last squeue failure, when the latest poll got no answer. */
  unknown?: string;
}

export interface AllocateHooks {
  /** Aborting withdraws the request (a pending job is cancelled, one granted meanwhile is released), unless `keepQueued`. */
  signal?: AbortSignal;
  /**
   * Asked when `signal` aborts: true leaves the request queued (the caller is going away, not
   * giving up: a worker shutting down), so the next attempt adopts the job with its age and place.
   * The abort still ends this call with CommandAbortedError. Default: withdraw.
   */
  keepQueued?(): boolean;
  onProgress?(p: AllocationProgress): void;
  /**
   * Queue time an earlier attempt already spent on this job name (a retried activity: its last
   * heartbeat). Counted in `waitedSeconds` and against `grantTimeoutSeconds` when the pending job is
   * adopted, so the wait keeps its age (the adopted job's salloc was started under that deadline);
   * ignored when a new salloc is submitted.
   */
  waitedSecondsBefore?: number;
}

/** Node states in which a node cannot run a job now but may again (sinfo's compact `%t` names). */
export const UNAVAILABLE_NODE =
  /^(down|drain|drng|drained|fail|failg|maint|boot|npc|powered_down|powering_down|powering_up|reboot)/i;

/**
 * A running allocation for the request, however long the queue. Never leaks, never loses its place:
 *  - a RUNNING job of this name is adopted (idempotent retry); a PENDING one is waited for instead
 *    of submitting a duplicate, so a retried activity keeps the queue position;
 *  - otherwise `salloc --no-shell` runs detached on the login node (a dropped SSH channel or a
 *    restarted worker does not withdraw it) and the job is followed by name, one squeue per
 *    `pendingPollMs`, its pending reason reported through `onProgress`;
 *  - past `grantTimeoutSeconds` (default hours) the job is withdrawn and the attempt fails
 *    (retryable); a request Slurm can never satisfy fails non-retryable with salloc's words;
 *    `PartitionNodeLimit` while nodes of the partition are down or drained is waited out;
 *  - `signal` aborted: the request is withdrawn (launcher TERMed, jobs of the name cancelled, a job
 *    granted meanwhile released) before CommandAbortedError is thrown, unless `keepQueued()` says
 *    the caller is only going away (then it is left queued for the next attempt to adopt).
 */
export function allocate(q: SlurmQueries, req: AllocateRequest, hooks: AllocateHooks = {}): Promise<GrantedJob> {
  return new AllocationWait(q, req, hooks).run();
}

/** One allocate call: the request, its launcher and what the queue has shown so far. */
class AllocationWait {
  private readonly ctx: ErrorContext;
  private readonly grantMs: number;
  private started = Date.now();
  private launcherPid?: number;
  private adoptedPending = false;
  private seenJob?: string;
  private unknown?: string;

  constructor(
    private readonly q: SlurmQueries,
    private readonly req: AllocateRequest,
    private readonly hooks: AllocateHooks,
  ) {
    this.ctx = { step: 'allocate', jobName: req.jobName };
    this.grantMs = (req.grantTimeoutSeconds ?? DEFAULT_GRANT_TIMEOUT_SECONDS) * 1000;
  }

  private get aborted(): boolean {
    return !!this.hooks.signal?.aborted;
  }

  async run(): Promise<GrantedJob> {
    if (this.aborted) return this.abort('aborted before start');
    const first = await adoptOrClean(this.q, this.req.jobName, this.ctx, true);
    if (first.allocation) return first.allocation;
    this.adoptedPending = first.pending > 0;
    if (this.adoptedPending) this.started -= Math.max(0, this.hooks.waitedSecondsBefore ?? 0) * 1000;
    else this.launcherPid = await this.submit();
    for (;;) {
      if (this.aborted) return this.abort('aborted while waiting for the grant');
      const live = await this.liveJobs();
      if (live === 'abort') return this.abort('aborted while waiting for the grant');
      const granted = live?.some((j) => j.state === 'RUNNING') ? await this.adoptGranted() : undefined;
      if (granted) return granted;
      const job = live?.[0];
      if (job) this.seenJob = job.jobId;
      this.report(live, job);
      if (job?.state === 'PENDING' && pendingReasonIsPermanent(job.reason)) await this.failIfPermanent(job);
      if (live && live.length === 0 && !(await this.stillSubmitting())) continue;
      if (Date.now() - this.started >= this.grantMs) await this.failTimedOut(job);
      // quick polls while salloc submits, then one squeue per pendingPoll while the job waits
      await sleep(job ? this.q.pendingPoll : this.q.poll, this.hooks.signal);
    }
  }

  /** Start the detached salloc; its pid on the login node. */
  private async submit(): Promise<number> {
    const { req, ctx } = this;
    const argv = sallocDetachedArgv(req); // validates the request before anything runs
    const r = await this.q.exec.run(argv, { timeoutMs: this.q.cmdTimeout });
    const pid = Number(r.stdout.trim().split('\n').pop());
    if (r.code === 0 && Number.isInteger(pid) && pid > 0) return pid;
    const setup = r.code === 127 ? setupErrorOf(r.code, r.stderr, 'bash', `allocation ${req.jobName}`, ctx) : undefined;
    if (setup) throw setup;
    throw new AllocationError(`allocation ${req.jobName}: could not start salloc (rc=${r.code})`, {
      context: { ...ctx, logTail: tail(r.stderr || r.stdout) },
    });
  }

  /** The live jobs of the name; undefined when squeue gave no answer (the job keeps its place: ask again). */
  private async liveJobs(): Promise<JobRow[] | undefined | 'abort'> {
    try {
      const live = (await this.q.jobsNamed(this.req.jobName, this.hooks.signal)).filter((j) => isLive(j.state));
      this.unknown = undefined;
      return live;
    } catch (err) {
      if (this.aborted) return 'abort';
      this.unknown = (err as Error).message;
      return undefined;
    }
  }

  private async adoptGranted(): Promise<GrantedJob | undefined> {
    const again = await adoptOrClean(this.q, this.req.jobName, this.ctx, false);
    if (!again.allocation) return undefined;
    // an abort that raced the grant: the job is ours, so it is ours to release (or keep, see keepQueued)
    if (this.aborted) return this.abort('aborted as the job was granted');
    return { ...again.allocation, adopted: this.adoptedPending || again.allocation.adopted };
  }

  private report(live: JobRow[] | undefined, job: JobRow | undefined): void {
    this.hooks.onProgress?.({
      jobName: this.req.jobName,
      jobId: job?.jobId ?? this.seenJob,
      state: job?.state ?? (live ? 'submitting' : 'unknown'),
      reason: job?.reason,
      waitedSeconds: Math.round((Date.now() - this.started) / 1000),
      adoptedPending: this.adoptedPending,
      unknown: this.unknown,
    });
  }

  /**
   * A pending reason no wait resolves fails the attempt (non-retryable). PartitionNodeLimit is also
   * what Slurm says while nodes of the partition are DOWN or DRAINED (squeue(1), JOB REASON CODES):
   * then, or when sinfo gives no answer, the job keeps waiting.
   */
  private async failIfPermanent(job: JobRow): Promise<void> {
    if (job.reason === 'PartitionNodeLimit' && (await this.someNodesUnavailable()) !== false) return;
    await withdraw(this.q, this.req.jobName, this.launcherPid);
    throw new AllocationError(
      `allocation ${this.req.jobName}: job ${job.jobId} can never start (pending reason ${job.reason}): the request exceeds a limit of partition ${this.req.partition ?? '(default)'}`,
      { kind: 'fatal', context: { ...this.ctx, jobId: job.jobId, reason: job.reason } },
    );
  }

  /** Are nodes of the request's partition down, drained or otherwise out for now? undefined: no answer. */
  private async someNodesUnavailable(): Promise<boolean | undefined> {
    try {
      const r = await this.q.query(sinfoNodesArgv(this.req.partition), this.ctx, { signal: this.hooks.signal });
      return parseNodeStates(r.stdout).some((n) => UNAVAILABLE_NODE.test(n.state));
    } catch {
      return undefined;
    }
  }

  /** Nothing queued under the name: true while salloc is still submitting; false to poll again at once; throws when it ended without a job. */
  private async stillSubmitting(): Promise<boolean> {
    const { q, req, ctx } = this;
    const launcherPid = this.launcherPid;
    const launching =
      launcherPid !== undefined && (await q.launcherAlive({ launcherPid, stepName: req.jobName }).catch(() => true));
    if (launching) return true;
    // salloc may have submitted, been granted and exited between the squeue and the pid check: ask again
    if ((await q.jobsNamed(req.jobName, this.hooks.signal).catch(() => [])).some((j) => isLive(j.state))) return false;
    const log = await fetchLogs(q, [{ node: 'login', logFile: sallocLogFile(req), jobId: this.seenJob ?? '0' }], {
      tailLines: 20,
    }).catch(() => []);
    const text = log[0]?.tail ?? '';
    const setup = setupErrorOf(null, text, 'salloc', `allocation ${req.jobName}`, ctx);
    if (setup) throw setup;
    const why = this.seenJob ? `job ${this.seenJob} ended before it was granted` : 'salloc ended without a job';
    throw new AllocationError(`allocation ${req.jobName} not granted: ${why}: ${tail(text, 3)}`, {
      kind: sallocIsPermanent(text) ? 'fatal' : 'transient',
      context: { ...ctx, jobId: this.seenJob ?? parseSalloc(text).jobId ?? undefined, logTail: tail(text) },
    });
  }

  /** The grant wait is over: the request is withdrawn; a partition that was down all along is the cluster's, not the request's. */
  private async failTimedOut(job: JobRow | undefined): Promise<never> {
    await withdraw(this.q, this.req.jobName, this.launcherPid);
    const message = `allocation ${this.req.jobName} not granted within ${Math.round(this.grantMs / 1000)} s (${job ? `${job.state}, ${job.reason}` : 'not queued'})`;
    const context = { ...this.ctx, jobId: this.seenJob, reason: job?.reason };
    if (job && partitionDown(job.reason))
      throw new ClusterUnavailableError(`${message}: partition ${this.req.partition ?? '(default)'} is down`, {
        context,
      });
    throw new AllocationError(message, { kind: 'transient', context });
  }

  /** Withdraw the request (a cancel) or leave it queued (the caller is going away), then end with CommandAbortedError. */
  private async abort(why: string): Promise<never> {
    const { req, ctx } = this;
    if (this.hooks.keepQueued?.()) {
      throw new CommandAbortedError(`allocation ${req.jobName} left queued for the next attempt: ${why}`, {
        context: { ...ctx, jobId: this.seenJob },
      });
    }
    await withdraw(this.q, req.jobName, this.launcherPid);
    throw new CommandAbortedError(`allocation ${req.jobName} withdrawn: ${why}`, { context: ctx });
  }
}

/**
 * Withdraw every trace of an allocation request: TERM its launcher (salloc withdraws a pending
 * request on TERM), cancel every live job of the name (pending or granted meanwhile), until
 * squeue lists none and the launcher is gone. Bounded by withdrawTimeoutMs.
 */
export async function withdraw(q: SlurmQueries, jobName: string, launcherPid?: number): Promise<void> {
  const deadline = Date.now() + q.withdrawTimeout;
  for (;;) {
    if (launcherPid !== undefined)
      await q.exec
        .run(killLauncherArgv(launcherPid, jobName), { timeoutMs: q.cmdTimeout, idempotent: true })
        .catch(() => undefined);
    const live = await q.jobsNamed(jobName).then(
      (js) => js.filter((j) => isLive(j.state)),
      () => undefined,
    );
    if (live) await Promise.all(live.map((j) => q.release(j.jobId).catch(() => undefined)));
    const launching =
      launcherPid !== undefined && (await q.launcherAlive({ launcherPid, stepName: jobName }).catch(() => true));
    if (live && live.length === 0 && !launching) return;
    if (Date.now() >= deadline) {
      throw new AllocationError(
        `allocation ${jobName} not withdrawn within ${q.withdrawTimeout} ms (live: ${live?.map((j) => `${j.jobId} ${j.state}`).join(', ') ?? 'no answer'})`,
        { kind: 'transient', context: { step: 'withdraw', jobName, jobId: live?.[0]?.jobId } },
      );
    }
    await sleep(q.poll);
  }
}

/**
 * A RUNNING job of this name → adopt it (cancelling any duplicates). PENDING ones, and granted
 * ones still CONFIGURING (nodes booting, prolog running), are left alone while `keepPending` (a
 * salloc may still be waiting for them; a configuring job becomes the allocation once RUNNING),
 * else cancelled.
 */
async function adoptOrClean(
  q: SlurmQueries,
  name: string,
  ctx: ErrorContext,
  keepPending: boolean,
): Promise<{ allocation: GrantedJob | null; pending: number }> {
  const live = (await q.jobsNamed(name)).filter((j) => isLive(j.state));
  const running = live.filter((j) => j.state === 'RUNNING').sort((a, b) => Number(a.jobId) - Number(b.jobId));
  const keep = running[0];
  const waitable = (j: JobRow): boolean => keepPending && (j.state === 'PENDING' || j.state === 'CONFIGURING');
  const cancel = live.filter((j) => j !== keep && (keep !== undefined || !waitable(j)));
  await Promise.all(cancel.map((j) => q.release(j.jobId)));
  const pending = live.filter((j) => !cancel.includes(j) && j !== keep).length;
  if (!keep) return { allocation: null, pending };
  const nodes = await q.expandNodes(keep.nodeList);
  if (nodes.length === 0)
    throw new AllocationError(`job ${keep.jobId} RUNNING without nodes`, { context: { ...ctx, jobId: keep.jobId } });
  return { allocation: { jobId: keep.jobId, jobName: name, nodes, headNode: nodes[0]!, adopted: true }, pending: 0 };
}
