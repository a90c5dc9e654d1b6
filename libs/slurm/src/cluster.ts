import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { InfersweepError, tail, type ErrorContext } from '@infersweep/core';
import type { Executor, RunOptions, RunResult } from './executor';
import {
  AllocationError,
  AllocationLostError,
  CommandAbortedError,
  CommandFailedError,
  ImageImportError,
  ImageLockTimeout,
  ImageMissingError,
  SetupError,
  StepLaunchError,
  SshConnectionError,
} from './errors';
import { shownCommand } from './executor';
import {
  cappedCatArgv,
  detachedArgv,
  DEFAULT_GRANT_TIMEOUT_SECONDS,
  ENROOT_IMPORT,
  hostnamesArgv,
  IMPORT_EXIT,
  imageFileName,
  importArgv,
  killLauncherArgv,
  livenessArgv,
  pidAliveArgv,
  sallocDetachedArgv,
  sallocLogFile,
  scancelArgv,
  showNodesArgv,
  squeueByNameArgv,
  squeueJobArgv,
  squeueLiveArgv,
  squeueStepsArgv,
  srunArgv,
  tailArgv,
  type AllocateRequest,
  type StepRuntime,
} from './commands';
import {
  fitsInTime,
  importErrorIsMissingImage,
  isPlainJobId,
  missingTool,
  parseNodeAddresses,
  pendingReasonIsPermanent,
  isLive,
  parseHostnames,
  parseJobLines,
  parseJobLinesTolerant,
  parseLiveness,
  parseSalloc,
  parseStepLines,
  parseTail,
  sallocIsPermanent,
  type JobRow,
  type JobState,
  type LivenessObservation,
} from './parse';
import { LivenessJudge, type LivenessJudgeOptions, type LivenessVerdict, type WatchedStep } from './liveness';

export interface Allocation {
  jobId: string;
  jobName: string;
  nodes: string[];
  headNode: string;
  /** true when an existing job of this name was adopted instead of a new salloc. */
  adopted: boolean;
}

export interface JobInfo {
  jobId: string;
  name: string;
  state: JobState;
  reason: string;
  nodes: string[];
  headNode: string | null;
  timeLeftSeconds: number | null;
  endTime: string | null;
}

export interface StepHandle {
  jobId: string;
  node: string;
  stepName: string;
  logFile: string;
  /** pid of the detached srun on the login node (covers the moment before squeue lists the step). */
  launcherPid?: number;
}

/** running: listed by `squeue -s` (or its srun is still starting); exited: gone; unknown: Slurm did not answer. */
export type StepState = 'running' | 'exited' | 'unknown';

export interface StepOptions extends Partial<StepRuntime> {
  stepName?: string;
  /**
   * Steps of the same name already in the job (an earlier launch whose answer was lost, a retried
   * activity) are stopped before the new one starts, so a retry never runs two servers on the
   * same ports. Default true.
   */
  replaceExisting?: boolean;
  /** Secret variables for the step: exported into srun's environment, named in `--export`, never in an argv. */
  secretEnv?: Record<string, string>;
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
  /** Aborting withdraws the request: a pending job is cancelled, one granted meanwhile is released. */
  signal?: AbortSignal;
  onProgress?(p: AllocationProgress): void;
  /**
   * Queue time an earlier attempt already spent on this job name (a retried activity: its last
   * heartbeat). Counted in `waitedSeconds` and against `grantTimeoutSeconds` when the pending job is
   * adopted, so the wait keeps its age (the adopted job's salloc was started under that deadline);
   * ignored when a new salloc is submitted.
   */
  waitedSecondsBefore?: number;
}

export interface LivenessWatch {
  /** Resolves with the first loss verdict, or null once stopped. */
  readonly loss: Promise<Extract<LivenessVerdict, { kind: 'allocation-lost' | 'step-lost' }> | null>;
  /** The latest verdict (alive / unknown / loss). */
  readonly last: LivenessVerdict | undefined;
  readonly polls: number;
  /** Stop polling; resolves once the poll in flight (if any) is done. */
  stop(): Promise<void>;
}

export interface LogTail {
  node: string;
  logFile: string;
  exists: boolean;
  bytes: number;
  tail: string;
}

export interface ImportImageRequest {
  image: string;
  squashDir: string;
  lockTimeoutSeconds: number;
  /** Default `enroot import -o {out} docker://{image}`; `{out}` / `{image}` are substituted. */
  importCommand?: string[];
  /** Upper bound for the whole import (lock wait + import); default lock wait + 1 h. */
  timeoutMs?: number;
  /**
   * Run the import on a compute node of an allocation (`srun --overlap` on that node, InferenceX's way)
   * instead of where the executor runs (the login node); `env` (e.g. ENROOT_CACHE_PATH) goes with it.
   */
  onNode?: { jobId: string; node: string; env?: Record<string, string> };
}

export interface ImportImageResult {
  squashPath: string;
  imported: boolean;
  durationMs: number;
}

export interface SlurmClusterOptions {
  /** How often to poll squeue while waiting for a state change (default 500 ms). */
  pollIntervalMs?: number;
  /** Timeout of one short Slurm command (squeue/scancel/scontrol; default 30 s). */
  commandTimeoutMs?: number;
  /** How long release waits for the job to leave RUNNING/COMPLETING (default 60 s). */
  releaseTimeoutMs?: number;
  /** How long launchStep waits for squeue to list the new step (default 30 s). */
  stepVisibleTimeoutMs?: number;
  /** Attempts of a read-only Slurm query that got no answer (slurmctld timed out, …); default 6. */
  readAttempts?: number;
  /** Poll interval while a job is queued (default 5 s: one squeue per job, for hours). */
  pendingPollMs?: number;
  /** Upper bound of the withdraw loop after an abort (default 60 s). */
  withdrawTimeoutMs?: number;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** A Slurm query that got no answer (rc≠0 without a definite reply): worth asking again. Exit 127 is an answer: the tool is missing. */
const noAnswer = (r: RunResult): boolean => r.code !== 0 && r.code !== 127 && !/Invalid job id/i.test(r.stderr);

/** Exit 127 / "command not found": the SetupError naming the tool, else undefined. */
function setupErrorOf(code: number | null, output: string, fallback: string, what: string, context: ErrorContext): SetupError | undefined {
  const tool = missingTool(code, output, fallback);
  if (tool === undefined) return undefined;
  return new SetupError(
    tool,
    `${what}: \`${tool}\` was not found on the cluster (exit ${code ?? '?'}); install it or put it on the login user's PATH (a module load in the login shell's rc file, or the image for container steps)`,
    { context: { ...context, logTail: tail(output) } },
  );
}

/** Slurm operations over one Executor (local or SSH to a login node). Every operation is idempotent. */
export class SlurmCluster {
  private readonly poll: number;
  private readonly cmdTimeout: number;
  private readonly releaseTimeout: number;
  private readonly stepVisible: number;
  private readonly readAttempts: number;
  private readonly pendingPoll: number;
  private readonly withdrawTimeout: number;

  constructor(
    readonly exec: Executor,
    opts: SlurmClusterOptions = {},
  ) {
    this.poll = opts.pollIntervalMs ?? 500;
    this.cmdTimeout = opts.commandTimeoutMs ?? 30_000;
    this.releaseTimeout = opts.releaseTimeoutMs ?? 60_000;
    this.stepVisible = opts.stepVisibleTimeoutMs ?? 30_000;
    this.readAttempts = Math.max(1, opts.readAttempts ?? 6);
    this.pendingPoll = opts.pendingPollMs ?? 5_000;
    this.withdrawTimeout = opts.withdrawTimeoutMs ?? 60_000;
  }

  /**
   * Run a read-only Slurm command, asking again (back-off 0.5 s → 4 s) while it gets no answer:
   * "Socket timed out" from a busy slurmctld is weather, not a verdict. A dropped connection or a
   * command timeout is asked again the same way.
   */
  private async read(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    let last: RunResult | undefined;
    let lastErr: unknown;
    for (let i = 0; i < this.readAttempts; i++) {
      if (i > 0) await sleep(Math.min(4_000, 500 * 2 ** (i - 1)), opts.signal);
      try {
        last = await this.exec.run(argv, { timeoutMs: this.cmdTimeout, idempotent: true, ...opts });
        lastErr = undefined;
        if (!noAnswer(last)) return last;
      } catch (err) {
        if (!(err instanceof InfersweepError) || !err.retryable) throw err;
        lastErr = err;
      }
    }
    if (lastErr) throw lastErr;
    return last!;
  }

  /** Run a read-only / idempotent Slurm command; non-zero exit → CommandFailedError with stderr. */
  private async query(argv: string[], context: ErrorContext, opts: RunOptions = {}): Promise<RunResult> {
    const r = await this.read(argv, opts);
    if (r.code !== 0) {
      const setup = r.code === 127 ? setupErrorOf(r.code, r.stderr, argv[0]!, `${argv[0]}`, context) : undefined;
      if (setup) throw setup;
      throw new CommandFailedError(`${argv[0]} failed (rc=${r.code}${r.signal ? ` signal=${r.signal}` : ''}): ${tail(r.stderr, 3)}`, {
        retryable: true,
        context: { ...context, logTail: tail(r.stderr || r.stdout), command: shownCommand(argv.join(' ')) },
      });
    }
    return r;
  }

  async expandNodes(nodeList: string): Promise<string[]> {
    if (!nodeList) return [];
    return parseHostnames((await this.query(hostnamesArgv(nodeList), { step: 'describe' })).stdout);
  }

  private async toInfo(row: JobRow): Promise<JobInfo> {
    const nodes = await this.expandNodes(row.nodeList);
    return {
      jobId: row.jobId,
      name: row.name,
      state: row.state,
      reason: row.reason,
      nodes,
      headNode: nodes[0] ?? null,
      timeLeftSeconds: row.timeLeftSeconds,
      endTime: row.endTime,
    };
  }

  /** Jobs (any state still known to slurmctld) carrying exactly this name. */
  async jobsNamed(name: string, signal?: AbortSignal): Promise<JobRow[]> {
    const r = await this.query(squeueByNameArgv(name), { step: 'allocate' }, { signal });
    return parseJobLines(r.stdout).filter((j) => j.name === name);
  }

  // ---------------------------------------------------------------- allocate

  /**
   * A running allocation for the request, however long the queue. Never leaks, never loses its
   * place:
   *  - a RUNNING job of this name is adopted (idempotent retry); a PENDING one is waited for instead
   *    of submitting a duplicate, so a retried activity keeps the queue position;
   *  - otherwise `salloc --no-shell` runs detached on the login node (a dropped SSH channel or a
   *    restarted worker does not withdraw it) and the job is followed by name, one squeue per
   *    `pendingPollMs`, its pending reason reported through `onProgress`;
   *  - past `grantTimeoutSeconds` (default hours) the job is withdrawn and the attempt fails
   *    (retryable); a request Slurm can never satisfy fails non-retryable with salloc's words;
   *  - `signal` aborted: the request is withdrawn (launcher TERMed, jobs of the name cancelled,
   *    a job granted meanwhile released) before CommandAbortedError is thrown.
   */
  async allocate(req: AllocateRequest, hooks: AllocateHooks = {}): Promise<Allocation> {
    const ctx: ErrorContext = { step: 'allocate', jobName: req.jobName };
    const grantMs = (req.grantTimeoutSeconds ?? DEFAULT_GRANT_TIMEOUT_SECONDS) * 1000;
    let started = Date.now();
    const { signal } = hooks;
    let launcherPid: number | undefined;
    const withdraw = async (why: string): Promise<never> => {
      await this.withdraw(req.jobName, launcherPid);
      throw new CommandAbortedError(`allocation ${req.jobName} withdrawn: ${why}`, { context: ctx });
    };
    if (signal?.aborted) return withdraw('aborted before start');

    const first = await this.adoptOrClean(req.jobName, ctx, true);
    if (first.allocation) return first.allocation;
    const adoptedPending = first.pending > 0;
    if (adoptedPending) started -= Math.max(0, hooks.waitedSecondsBefore ?? 0) * 1000;
    else {
      const argv = sallocDetachedArgv(req); // validates the request before anything runs
      const r = await this.exec.run(argv, { timeoutMs: this.cmdTimeout });
      const pid = Number(r.stdout.trim().split('\n').pop());
      if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0) {
        const setup = r.code === 127 ? setupErrorOf(r.code, r.stderr, 'bash', `allocation ${req.jobName}`, ctx) : undefined;
        if (setup) throw setup;
        throw new AllocationError(`allocation ${req.jobName}: could not start salloc (rc=${r.code})`, {
          context: { ...ctx, logTail: tail(r.stderr || r.stdout) },
        });
      }
      launcherPid = pid;
    }
    let seenJob: string | undefined;
    let unknown: string | undefined;
    for (let polls = 0; ; polls++) {
      if (signal?.aborted) return withdraw('aborted while waiting for the grant');
      let live: JobRow[] | undefined;
      try {
        live = (await this.jobsNamed(req.jobName, signal)).filter((j) => isLive(j.state));
        unknown = undefined;
      } catch (err) {
        if (signal?.aborted) return withdraw('aborted while waiting for the grant');
        unknown = (err as Error).message; // no answer: ask again next tick, the job keeps its place
      }
      if (live?.some((j) => j.state === 'RUNNING')) {
        const again = await this.adoptOrClean(req.jobName, ctx, false);
        if (again.allocation) {
          // an abort that raced the grant: the job is ours, so it is ours to release
          if (signal?.aborted) return withdraw('aborted as the job was granted');
          return { ...again.allocation, adopted: adoptedPending || again.allocation.adopted };
        }
      }
      const job = live?.[0];
      if (job) seenJob = job.jobId;
      hooks.onProgress?.({
        jobName: req.jobName,
        jobId: job?.jobId ?? seenJob,
        state: job?.state ?? (live ? 'submitting' : 'unknown'),
        reason: job?.reason,
        waitedSeconds: Math.round((Date.now() - started) / 1000),
        adoptedPending,
        unknown,
      });
      if (job && job.state === 'PENDING' && pendingReasonIsPermanent(job.reason)) {
        await this.withdraw(req.jobName, launcherPid);
        throw new AllocationError(
          `allocation ${req.jobName}: job ${job.jobId} can never start (pending reason ${job.reason}): the request exceeds a limit of partition ${req.partition ?? '(default)'}`,
          {
            retryable: false,
            context: { ...ctx, jobId: job.jobId, reason: job.reason },
          },
        );
      }
      if (live && live.length === 0) {
        // nothing queued under this name: salloc is still submitting, or it ended without a job
        const launching = launcherPid !== undefined && (await this.launcherAlive({ launcherPid, stepName: req.jobName }).catch(() => true));
        // salloc may have submitted, been granted and exited between the squeue and the pid check: ask again
        if (!launching && (await this.jobsNamed(req.jobName, signal).catch(() => [])).some((j) => isLive(j.state))) continue;
        if (!launching) {
          const log = await this.fetchLogs([{ node: 'login', logFile: sallocLogFile(req), jobId: seenJob ?? '0' }], {
            tailLines: 20,
          }).catch(() => []);
          const text = log[0]?.tail ?? '';
          const parsed = parseSalloc(text);
          const setup = setupErrorOf(null, text, 'salloc', `allocation ${req.jobName}`, ctx);
          if (setup) throw setup;
          const why = seenJob ? `job ${seenJob} ended before it was granted` : 'salloc ended without a job';
          throw new AllocationError(`allocation ${req.jobName} not granted: ${why}: ${tail(text, 3)}`, {
            retryable: !sallocIsPermanent(text),
            context: { ...ctx, jobId: seenJob ?? parsed.jobId ?? undefined, logTail: tail(text) },
          });
        }
      }
      if (Date.now() - started >= grantMs) {
        await this.withdraw(req.jobName, launcherPid);
        throw new AllocationError(
          `allocation ${req.jobName} not granted within ${Math.round(grantMs / 1000)} s (${job ? `${job.state}, ${job.reason}` : 'not queued'})`,
          {
            retryable: true,
            context: { ...ctx, jobId: seenJob, reason: job?.reason },
          },
        );
      }
      // quick polls while salloc submits, then one squeue per pendingPoll while the job waits
      await sleep(job ? this.pendingPoll : this.poll, signal);
    }
  }

  /**
   * Withdraw every trace of an allocation request: TERM its launcher (salloc withdraws a pending
   * request on TERM), cancel every live job of the name (pending or granted meanwhile), until
   * squeue lists none and the launcher is gone. Bounded by withdrawTimeoutMs.
   */
  async withdraw(jobName: string, launcherPid?: number): Promise<void> {
    const deadline = Date.now() + this.withdrawTimeout;
    for (;;) {
      if (launcherPid !== undefined)
        await this.exec
          .run(killLauncherArgv(launcherPid, jobName), { timeoutMs: this.cmdTimeout, idempotent: true })
          .catch(() => undefined);
      const live = await this.jobsNamed(jobName).then(
        (js) => js.filter((j) => isLive(j.state)),
        () => undefined,
      );
      if (live) await Promise.all(live.map((j) => this.release(j.jobId).catch(() => undefined)));
      const launching = launcherPid !== undefined && (await this.launcherAlive({ launcherPid, stepName: jobName }).catch(() => true));
      if (live && live.length === 0 && !launching) return;
      if (Date.now() >= deadline) {
        throw new AllocationError(
          `allocation ${jobName} not withdrawn within ${this.withdrawTimeout} ms (live: ${live?.map((j) => `${j.jobId} ${j.state}`).join(', ') ?? 'no answer'})`,
          {
            retryable: true,
            context: { step: 'withdraw', jobName, jobId: live?.[0]?.jobId },
          },
        );
      }
      await sleep(this.poll);
    }
  }

  /**
   * A RUNNING job of this name → adopt it (cancelling any duplicates). PENDING ones, and granted
   * ones still CONFIGURING (nodes booting, prolog running), are left alone while `keepPending` (a
   * salloc may still be waiting for them; a configuring job becomes the allocation once RUNNING),
   * else cancelled.
   */
  private async adoptOrClean(
    name: string,
    ctx: ErrorContext,
    keepPending: boolean,
  ): Promise<{ allocation: Allocation | null; pending: number }> {
    const live = (await this.jobsNamed(name)).filter((j) => isLive(j.state));
    const running = live.filter((j) => j.state === 'RUNNING').sort((a, b) => Number(a.jobId) - Number(b.jobId));
    const keep = running[0];
    const waitable = (j: JobRow): boolean => keepPending && (j.state === 'PENDING' || j.state === 'CONFIGURING');
    const cancel = live.filter((j) => j !== keep && (keep !== undefined || !waitable(j)));
    await Promise.all(cancel.map((j) => this.release(j.jobId)));
    const pending = live.filter((j) => !cancel.includes(j) && j !== keep).length;
    if (!keep) return { allocation: null, pending };
    const nodes = await this.expandNodes(keep.nodeList);
    if (nodes.length === 0)
      throw new AllocationError(`job ${keep.jobId} RUNNING without nodes`, { context: { ...ctx, jobId: keep.jobId } });
    return { allocation: { jobId: keep.jobId, jobName: name, nodes, headNode: nodes[0]!, adopted: true }, pending: 0 };
  }

  // ---------------------------------------------------------------- describe / liveness

  /** State, reason, expanded nodes, time left. A job slurmctld no longer knows is `GONE`. */
  async describe(jobId: string): Promise<JobInfo> {
    const r = await this.read(squeueJobArgv(jobId));
    if (r.code === 127) throw setupErrorOf(r.code, r.stderr, 'squeue', `squeue -j ${jobId}`, { jobId, step: 'describe' })!;
    if (r.code !== 0 && /Invalid job id/i.test(r.stderr)) {
      return { jobId, name: '', state: 'GONE', reason: 'Invalid job id', nodes: [], headNode: null, timeLeftSeconds: null, endTime: null };
    }
    if (r.code !== 0) {
      throw new CommandFailedError(`squeue -j ${jobId} failed (rc=${r.code}): ${tail(r.stderr, 3)}`, {
        retryable: true,
        context: { jobId, step: 'describe', logTail: tail(r.stderr) },
      });
    }
    const row = parseJobLines(r.stdout).find((j) => j.jobId === jobId);
    if (!row)
      return { jobId, name: '', state: 'GONE', reason: 'not in squeue', nodes: [], headNode: null, timeLeftSeconds: null, endTime: null };
    return this.toInfo(row);
  }

  /** Throws AllocationLostError (retryable) unless the job is RUNNING (or CONFIGURING: granted, nodes still starting). */
  async assertAlive(jobId: string, step?: string): Promise<JobInfo> {
    const info = await this.describe(jobId);
    if (info.state !== 'RUNNING' && info.state !== 'CONFIGURING') {
      throw new AllocationLostError(
        `allocation ${jobId} is ${info.state}${info.reason && info.reason !== 'None' ? ` (${info.reason})` : ''}`,
        {
          state: info.state,
          reason: info.reason,
          context: { jobId, step, node: info.nodes.join(',') || undefined },
        },
      );
    }
    return info;
  }

  /** Poll describe until `pred` holds or the deadline passes; returns the last JobInfo. */
  async waitFor(jobId: string, pred: (j: JobInfo) => boolean, timeoutMs: number): Promise<JobInfo> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const info = await this.describe(jobId);
      if (pred(info) || Date.now() >= deadline) return info;
      await sleep(this.poll);
    }
  }

  async timeLeft(jobId: string): Promise<number | null> {
    const info = await this.describe(jobId);
    return info.state === 'RUNNING' ? info.timeLeftSeconds : 0;
  }

  /** The workflow's time guard: does a piece of work of `budgetSeconds` fit before the allocation ends? */
  async canFinish(jobId: string, budgetSeconds: number, marginSeconds: number): Promise<boolean> {
    return fitsInTime(await this.timeLeft(jobId), budgetSeconds, marginSeconds);
  }

  /** NodeAddr of each node (what other nodes and the client use to reach it). */
  async nodeAddresses(nodes: string[]): Promise<Record<string, string>> {
    if (nodes.length === 0) return {};
    const r = await this.query(showNodesArgv(nodes), { step: 'node-addresses', node: nodes.join(',') });
    const found = parseNodeAddresses(r.stdout);
    for (const n of nodes)
      if (!found[n])
        throw new CommandFailedError(`no NodeAddr for ${n}`, { context: { node: n, step: 'node-addresses', logTail: tail(r.stdout) } });
    return Object.fromEntries(nodes.map((n) => [n, found[n]!]));
  }

  /** One batched liveness observation (job, steps, launchers) in one round trip; no answer → both sections failed. */
  async observe(jobId: string, steps: readonly WatchedStep[] = []): Promise<LivenessObservation> {
    const argv = livenessArgv(
      jobId,
      steps.filter((s) => s.launcherPid).map((s) => ({ pid: s.launcherPid!, name: s.stepName })),
    );
    try {
      const r = await this.exec.run(argv, { timeoutMs: this.cmdTimeout, idempotent: true });
      return parseLiveness(r.stdout, jobId);
    } catch (err) {
      const error = `liveness poll failed: ${(err as Error).message}`;
      return { job: { ok: false, error }, steps: { ok: false, error }, launchers: {} };
    }
  }

  /**
   * Watch an allocation and its steps: one observation per `intervalMs` (the next one starts only
   * after the previous answered: never two in flight), judged by LivenessJudge. `loss` resolves at
   * the first loss verdict; `onVerdict` sees every verdict (for progress).
   */
  watchLiveness(
    jobId: string,
    steps: readonly WatchedStep[],
    opts: { intervalMs: number; judge?: LivenessJudgeOptions; onVerdict?(v: LivenessVerdict): void },
  ): LivenessWatch {
    const judge = new LivenessJudge(steps, opts.judge);
    const stopCtl = new AbortController();
    const state: { last: LivenessVerdict | undefined; polls: number } = { last: undefined, polls: 0 };
    const loop = async (): Promise<Extract<LivenessVerdict, { kind: 'allocation-lost' | 'step-lost' }> | null> => {
      while (!stopCtl.signal.aborted) {
        const o = await this.observe(jobId, steps);
        if (stopCtl.signal.aborted) break;
        const v = judge.observe(o);
        state.polls += 1;
        state.last = v;
        opts.onVerdict?.(v);
        if (v.kind === 'allocation-lost' || v.kind === 'step-lost') return v;
        await sleep(opts.intervalMs, stopCtl.signal);
      }
      return null;
    };
    const loss = loop();
    return {
      loss,
      get last() {
        return state.last;
      },
      get polls() {
        return state.polls;
      },
      stop: async () => {
        stopCtl.abort();
        await loss.catch(() => null);
      },
    };
  }

  // ---------------------------------------------------------------- release / janitor

  /**
   * scancel the job (an already-gone job is success) and wait until it is no longer live
   * (bounded; a job stuck COMPLETING after a killed slurmd is reported, not waited on forever).
   */
  async release(jobId: string): Promise<{ state: JobState; settled: boolean }> {
    const r = await this.exec.run(scancelArgv(jobId), { timeoutMs: this.cmdTimeout, idempotent: true });
    if (r.code === 127) throw setupErrorOf(r.code, r.stderr, 'scancel', `scancel ${jobId}`, { jobId, step: 'release' })!;
    if (r.code !== 0 && !/Invalid job id/i.test(r.stderr)) {
      throw new CommandFailedError(`scancel ${jobId} failed (rc=${r.code}): ${tail(r.stderr, 3)}`, {
        retryable: r.code !== 210,
        context: { jobId, step: 'release', logTail: tail(r.stderr) },
      });
    }
    const info = await this.waitFor(jobId, (j) => !isLive(j.state), this.releaseTimeout);
    return { state: info.state, settled: !isLive(info.state) };
  }

  /**
   * The login user's live jobs whose name starts with `prefix` (for the janitor). Lines squeue
   * prints that do not parse, and array / het-job ids (`123_4`, `123_[1-9]`, `123+0`: never
   * infersweep's), are skipped and reported to `onSkipped`, never fatal.
   */
  async findOrphans(
    prefix: string,
    onSkipped?: (line: string, why: string) => void,
  ): Promise<{ jobId: string; name: string; state: JobState; nodes: string[] }[]> {
    const r = await this.query(squeueLiveArgv(), { step: 'janitor' });
    const { rows: parsed, skipped } = parseJobLinesTolerant(r.stdout);
    for (const l of skipped) onSkipped?.(l, 'unparsable squeue line');
    const rows = parsed.filter((j) => j.name.startsWith(prefix) && isLive(j.state));
    for (const j of rows.filter((x) => !isPlainJobId(x.jobId)))
      onSkipped?.(`${j.jobId} ${j.name}`, 'a job-array or het-job id: not an infersweep allocation');
    const ours = rows.filter((j) => isPlainJobId(j.jobId));
    return Promise.all(
      ours.map(async (j) => ({ jobId: j.jobId, name: j.name, state: j.state, nodes: await this.expandNodes(j.nodeList) })),
    );
  }

  // ---------------------------------------------------------------- steps

  /**
   * One single-task srun step on `node`, detached from the SSH session, output to `logFile`
   * (shared storage). Returns at once with a handle.
   */
  async launchStep(
    jobId: string,
    node: string,
    argv: string[],
    env: Record<string, string>,
    logFile: string,
    opts: StepOptions = {},
  ): Promise<StepHandle> {
    const stepName = opts.stepName ?? `infersweep-step-${node}-${randomUUID().slice(0, 8)}`;
    const ctx: ErrorContext = { jobId, node, step: `launch:${stepName}` };
    const secretNames = Object.keys(opts.secretEnv ?? {});
    const srun = srunArgv({
      jobId,
      node,
      stepName,
      argv,
      env,
      runtime: opts.runtime ?? 'host',
      containerImage: opts.containerImage,
      containerMounts: opts.containerMounts,
      isolateEnv: opts.isolateEnv,
      secretNames,
    });
    await this.assertAlive(jobId, ctx.step);
    // idempotent launch: a same-name step left by an earlier attempt is stopped first
    if (opts.replaceExisting !== false && (await this.findStep({ jobId, node, stepName }))) await this.stopStep({ jobId, node, stepName });
    let r: RunResult;
    try {
      r = await this.exec.run(detachedArgv(logFile, srun), {
        timeoutMs: this.cmdTimeout,
        ...(secretNames.length ? { secretEnv: opts.secretEnv } : {}),
      });
    } catch (err) {
      throw new StepLaunchError(`launching step ${stepName} on ${node}: ${(err as Error).message}`, {
        retryable: err instanceof SshConnectionError,
        cause: err,
        context: ctx,
      });
    }
    const pid = Number(r.stdout.trim().split('\n').pop());
    if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0) {
      const setup = r.code === 127 ? setupErrorOf(r.code, r.stderr, 'bash', `launching step ${stepName} on ${node}`, ctx) : undefined;
      if (setup) throw setup;
      throw new StepLaunchError(`launching step ${stepName} on ${node} failed (rc=${r.code})`, {
        context: { ...ctx, logTail: tail(r.stderr || r.stdout) },
      });
    }
    const handle: StepHandle = { jobId, node, stepName, logFile, launcherPid: pid };
    // Return once Slurm lists the step, so a watcher never mistakes "not registered yet" for "gone".
    const deadline = Date.now() + this.stepVisible;
    for (;;) {
      if (await this.findStep(handle)) return handle;
      if (!(await this.launcherAlive(handle))) {
        if (await this.findStep(handle)) return handle;
        const [log] = await this.fetchLogs([handle], { tailLines: 30 });
        const setup = log ? setupErrorOf(null, log.tail, '', `step ${stepName} on ${node} failed to start`, ctx) : undefined;
        if (setup) throw setup;
        if (log && /srun: error|slurmstepd[^:]*: error|execve|Unable to|Invalid/i.test(log.tail)) {
          throw new StepLaunchError(`step ${stepName} on ${node} failed to start`, {
            retryable: false,
            context: { ...ctx, logTail: log.tail },
          });
        }
        return handle; // it ran and already finished
      }
      if (Date.now() >= deadline) {
        await this.stopStep(handle).catch(() => undefined);
        throw new StepLaunchError(`step ${stepName} on ${node} not visible in squeue after ${this.stepVisible} ms`, { context: ctx });
      }
      await sleep(this.poll);
    }
  }

  private async findStep(h: Pick<StepHandle, 'jobId' | 'node' | 'stepName'>): Promise<{ stepId: string } | null> {
    const r = await this.read(squeueStepsArgv(h.jobId));
    if (r.code !== 0) {
      if (/Invalid job id/i.test(r.stderr)) return null;
      throw new CommandFailedError(`squeue -s -j ${h.jobId} failed: ${tail(r.stderr, 3)}`, {
        retryable: true,
        context: { jobId: h.jobId, node: h.node, step: h.stepName, logTail: tail(r.stderr) },
      });
    }
    const s = parseStepLines(r.stdout).find((x) => x.name === h.stepName);
    return s ? { stepId: s.stepId } : null;
  }

  private async launcherAlive(h: Pick<StepHandle, 'launcherPid' | 'stepName'>): Promise<boolean> {
    if (!h.launcherPid) return false;
    const r = await this.exec.run(pidAliveArgv(h.launcherPid, h.stepName), { timeoutMs: this.cmdTimeout, idempotent: true });
    return r.stdout.trim() === 'alive';
  }

  async stepStatus(h: Pick<StepHandle, 'jobId' | 'node' | 'stepName' | 'launcherPid'>): Promise<StepState> {
    try {
      if (await this.findStep(h)) return 'running';
      return (await this.launcherAlive(h)) ? 'running' : 'exited';
    } catch {
      return 'unknown';
    }
  }

  /** scancel J.S (a step that is already gone is success); waits until the step has left squeue. */
  async stopStep(h: Pick<StepHandle, 'jobId' | 'node' | 'stepName' | 'launcherPid'>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.findStep(h);
      if (!s && !(await this.launcherAlive(h))) return;
      if (s) await this.exec.run(scancelArgv(s.stepId), { timeoutMs: this.cmdTimeout, idempotent: true });
      if (Date.now() >= deadline) {
        throw new CommandFailedError(`step ${h.stepName} of job ${h.jobId} still present after ${timeoutMs} ms`, {
          retryable: true,
          context: { jobId: h.jobId, node: h.node, step: h.stepName },
        });
      }
      await sleep(this.poll);
    }
  }

  // ---------------------------------------------------------------- logs

  /** Size and last lines of each step's log (fine while the steps run and after they end). */
  async fetchLogs(handles: Pick<StepHandle, 'node' | 'logFile' | 'jobId'>[], opts: { tailLines?: number } = {}): Promise<LogTail[]> {
    return Promise.all(
      handles.map(async (h) => {
        const r = await this.query(tailArgv(h.logFile, opts.tailLines ?? 50), { jobId: h.jobId, node: h.node, step: 'logs' });
        return { node: h.node, logFile: h.logFile, ...parseTail(r.stdout) };
      }),
    );
  }

  /**
   * Copy each log into `destDir` (local) as `<node>.log`, streamed to the file (never held whole in
   * memory) and capped at `maxBytes` per log (default 64 MiB: the last bytes, after a header line
   * saying how much was left out). Each copy lands by rename, so a failed copy leaves no partial file.
   */
  async copyLogs(
    handles: Pick<StepHandle, 'node' | 'logFile' | 'jobId'>[],
    destDir: string,
    opts: { maxBytes?: number; timeoutMs?: number } = {},
  ): Promise<{ node: string; path: string; bytes: number }[]> {
    await mkdir(destDir, { recursive: true });
    const out: { node: string; path: string; bytes: number }[] = [];
    for (const h of handles) {
      const path = join(destDir, `${posix.basename(h.node)}.log`);
      const tmp = `${path}.partial-${randomUUID().slice(0, 8)}`;
      const file = createWriteStream(tmp);
      let bytes = 0;
      try {
        const r = await this.exec.run(cappedCatArgv(h.logFile, opts.maxBytes ?? 64 * 1024 * 1024), {
          timeoutMs: opts.timeoutMs ?? 300_000,
          idempotent: true,
          collectStdout: false,
          onStdout: (chunk) => {
            bytes += Buffer.byteLength(chunk);
            file.write(chunk);
          },
        });
        await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
        if (r.code !== 0) {
          throw new CommandFailedError(`copying ${h.logFile} failed (rc=${r.code}): ${tail(r.stderr, 3)}`, {
            retryable: r.code !== 66,
            context: { jobId: h.jobId, node: h.node, step: 'logs', logTail: tail(r.stderr) },
          });
        }
        await rename(tmp, path);
      } catch (err) {
        file.destroy();
        await unlink(tmp).catch(() => undefined);
        throw err;
      }
      out.push({ node: h.node, path, bytes });
    }
    return out;
  }

  // ---------------------------------------------------------------- images

  /**
   * One import per squash path, under `flock -w lockTimeoutSeconds`. A lock not acquired in
   * time → ImageLockTimeout (never a fall-through); a valid existing file is reused; a fresh
   * import goes to a temporary name, is validated with `unsquashfs -l` and renamed into place.
   */
  async importImage(req: ImportImageRequest): Promise<ImportImageResult> {
    if (!req.squashDir.startsWith('/')) throw new TypeError(`squashDir must be absolute: ${JSON.stringify(req.squashDir)}`);
    const squashPath = posix.join(req.squashDir, imageFileName(req.image));
    const argv = importArgv({
      squashPath,
      lockPath: `${squashPath}.lock`,
      lockTimeoutSeconds: req.lockTimeoutSeconds,
      tmpPath: `${squashPath}.tmp-${randomUUID().slice(0, 12)}`,
      image: req.image,
      importCommand: req.importCommand ?? ENROOT_IMPORT,
    });
    const ctx: ErrorContext = {
      step: 'import-image',
      image: req.image,
      squashPath,
      ...(req.onNode ? { jobId: req.onNode.jobId, node: req.onNode.node } : {}),
    };
    const run = req.onNode
      ? srunArgv({
          jobId: req.onNode.jobId,
          node: req.onNode.node,
          stepName: 'infersweep-import',
          argv,
          env: req.onNode.env ?? {},
          runtime: 'host',
        })
      : argv;
    const r = await this.exec.run(run, { timeoutMs: req.timeoutMs ?? req.lockTimeoutSeconds * 1000 + 3_600_000 });
    const logTail = tail(r.stderr || r.stdout);
    if (r.code === 0) return { squashPath, imported: /infersweep-image: imported/.test(r.stdout), durationMs: r.durationMs };
    const setup = setupErrorOf(r.code === IMPORT_EXIT.importFailed ? null : r.code, r.stderr, '', `import of ${req.image}`, ctx);
    if (setup) throw setup;
    if (r.code === IMPORT_EXIT.lockTimeout)
      throw new ImageLockTimeout(`lock on ${squashPath} not acquired within ${req.lockTimeoutSeconds} s`, { context: { ...ctx, logTail } });
    if (r.code === IMPORT_EXIT.importFailed && importErrorIsMissingImage(r.stderr))
      throw new ImageMissingError(`image ${req.image} not found`, { context: { ...ctx, logTail } });
    throw new ImageImportError(`import of ${req.image} failed (rc=${r.code})`, { context: { ...ctx, logTail } });
  }
}
