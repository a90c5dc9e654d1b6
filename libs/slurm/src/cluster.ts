import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { tail, type ErrorContext } from '@infersweep/topology';
import type { Executor, RunOptions, RunResult } from './executor';
import {
  AllocationError, AllocationLostError, CommandFailedError, ImageImportError, ImageLockTimeout, ImageMissingError,
  StepLaunchError, SshConnectionError,
} from './errors';
import {
  detachedArgv, ENROOT_IMPORT, hostnamesArgv, IMPORT_EXIT, imageFileName, importArgv, pidAliveArgv, sallocArgv,
  scancelArgv, showNodesArgv, squeueByNameArgv, squeueJobArgv, squeueLiveArgv, squeueStepsArgv, srunArgv, tailArgv,
  type AllocateRequest, type StepRuntime,
} from './commands';
import {
  fitsInTime, importErrorIsMissingImage, parseNodeAddresses, isLive, parseHostnames, parseJobLines, parseSalloc, parseStepLines,
  parseTail, sallocIsPermanent, type JobRow, type JobState,
} from './parse';

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
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Slurm operations over one Executor (local or SSH to a login node). Every operation is idempotent. */
export class SlurmCluster {
  private readonly poll: number;
  private readonly cmdTimeout: number;
  private readonly releaseTimeout: number;
  private readonly stepVisible: number;

  constructor(readonly exec: Executor, opts: SlurmClusterOptions = {}) {
    this.poll = opts.pollIntervalMs ?? 500;
    this.cmdTimeout = opts.commandTimeoutMs ?? 30_000;
    this.releaseTimeout = opts.releaseTimeoutMs ?? 60_000;
    this.stepVisible = opts.stepVisibleTimeoutMs ?? 30_000;
  }

  /** Run a read-only / idempotent Slurm command; non-zero exit → CommandFailedError with stderr. */
  private async query(argv: string[], context: ErrorContext, opts: RunOptions = {}): Promise<RunResult> {
    const r = await this.exec.run(argv, { timeoutMs: this.cmdTimeout, idempotent: true, ...opts });
    if (r.code !== 0) {
      throw new CommandFailedError(`${argv[0]} failed (rc=${r.code}${r.signal ? ` signal=${r.signal}` : ''}): ${tail(r.stderr, 3)}`, {
        retryable: true,
        context: { ...context, logTail: tail(r.stderr || r.stdout), command: argv.join(' ') },
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
      jobId: row.jobId, name: row.name, state: row.state, reason: row.reason, nodes, headNode: nodes[0] ?? null,
      timeLeftSeconds: row.timeLeftSeconds, endTime: row.endTime,
    };
  }

  /** Jobs (any state still known to slurmctld) carrying exactly this name. */
  async jobsNamed(name: string): Promise<JobRow[]> {
    const r = await this.query(squeueByNameArgv(name), { step: 'allocate' });
    return parseJobLines(r.stdout).filter((j) => j.name === name);
  }

  // ---------------------------------------------------------------- allocate

  /**
   * `salloc --no-shell` for the request. Never leaks: a live job of the same name is adopted
   * (idempotent retry); if salloc's output is lost (dropped connection, unparsable, timeout) the
   * job is found by its unique name and adopted if RUNNING, otherwise cancelled.
   */
  async allocate(req: AllocateRequest): Promise<Allocation> {
    const argv = sallocArgv(req);
    const ctx: ErrorContext = { step: 'allocate', jobName: req.jobName };
    const first = await this.adoptOrClean(req.jobName, ctx, true);
    if (first.allocation) return first.allocation;

    const grantMs = (req.grantTimeoutSeconds ?? 300) * 1000;
    let r: RunResult | undefined;
    let lost: unknown;
    let parsed: { jobId: string | null; granted: boolean } = { jobId: null, granted: false };
    // A PENDING job of this name means an earlier salloc (whose caller lost it) is still waiting:
    // wait for that one instead of submitting a duplicate.
    if (first.pending === 0) {
      try {
        r = await this.exec.run(argv, { timeoutMs: grantMs + 60_000, idempotent: false });
      } catch (err) {
        lost = err; // connection dropped or outer timeout: the job may exist, salloc may still be waiting
      }
      parsed = r ? parseSalloc(r.stderr) : parsed;
      if (r && r.code === 0 && parsed.granted && parsed.jobId) {
        const info = await this.describe(parsed.jobId);
        if (info.state === 'RUNNING' && info.nodes.length > 0) {
          return { jobId: info.jobId, jobName: req.jobName, nodes: info.nodes, headNode: info.nodes[0]!, adopted: false };
        }
      }
    }
    // Anything else: recover by name. After a dropped connection salloc keeps waiting on the login
    // node, so give the job until the grant deadline to start; past it, cancel whatever is left.
    const deadline = Date.now() + (lost || first.pending > 0 ? grantMs : 5_000);
    for (;;) {
      const inTime = Date.now() < deadline;
      const again = await this.adoptOrClean(req.jobName, ctx, inTime);
      if (again.allocation) return again.allocation;
      if (again.pending === 0 || !inTime) break;
      await sleep(this.poll);
    }
    const stderr = r?.stderr ?? '';
    const permanent = sallocIsPermanent(stderr);
    throw new AllocationError(
      lost ? `allocation ${req.jobName}: ${(lost as Error).message}` : `allocation ${req.jobName} not granted (rc=${r?.code}): ${tail(stderr, 3)}`,
      { retryable: !permanent, cause: lost, context: { ...ctx, jobId: parsed.jobId ?? undefined, logTail: tail(stderr) } },
    );
  }

  /**
   * A RUNNING job of this name → adopt it (cancelling any duplicates). PENDING ones are left alone
   * while `keepPending` (a salloc may still be waiting for them), else cancelled.
   */
  private async adoptOrClean(name: string, ctx: ErrorContext, keepPending: boolean): Promise<{ allocation: Allocation | null; pending: number }> {
    const live = (await this.jobsNamed(name)).filter((j) => isLive(j.state));
    const running = live.filter((j) => j.state === 'RUNNING').sort((a, b) => Number(a.jobId) - Number(b.jobId));
    const keep = running[0];
    const cancel = live.filter((j) => j !== keep && (keep !== undefined || !keepPending || j.state !== 'PENDING'));
    await Promise.all(cancel.map((j) => this.release(j.jobId)));
    const pending = live.filter((j) => !cancel.includes(j) && j !== keep).length;
    if (!keep) return { allocation: null, pending };
    const nodes = await this.expandNodes(keep.nodeList);
    if (nodes.length === 0) throw new AllocationError(`job ${keep.jobId} RUNNING without nodes`, { context: { ...ctx, jobId: keep.jobId } });
    return { allocation: { jobId: keep.jobId, jobName: name, nodes, headNode: nodes[0]!, adopted: true }, pending: 0 };
  }

  // ---------------------------------------------------------------- describe / liveness

  /** State, reason, expanded nodes, time left. A job slurmctld no longer knows is `GONE`. */
  async describe(jobId: string): Promise<JobInfo> {
    const r = await this.exec.run(squeueJobArgv(jobId), { timeoutMs: this.cmdTimeout, idempotent: true });
    if (r.code !== 0 && /Invalid job id/i.test(r.stderr)) {
      return { jobId, name: '', state: 'GONE', reason: 'Invalid job id', nodes: [], headNode: null, timeLeftSeconds: null, endTime: null };
    }
    if (r.code !== 0) {
      throw new CommandFailedError(`squeue -j ${jobId} failed (rc=${r.code}): ${tail(r.stderr, 3)}`, {
        retryable: true, context: { jobId, step: 'describe', logTail: tail(r.stderr) },
      });
    }
    const row = parseJobLines(r.stdout).find((j) => j.jobId === jobId);
    if (!row) return { jobId, name: '', state: 'GONE', reason: 'not in squeue', nodes: [], headNode: null, timeLeftSeconds: null, endTime: null };
    return this.toInfo(row);
  }

  /** Throws AllocationLostError (retryable) unless the job is RUNNING. */
  async assertAlive(jobId: string, step?: string): Promise<JobInfo> {
    const info = await this.describe(jobId);
    if (info.state !== 'RUNNING') {
      throw new AllocationLostError(`allocation ${jobId} is ${info.state}${info.reason && info.reason !== 'None' ? ` (${info.reason})` : ''}`, {
        state: info.state, reason: info.reason,
        context: { jobId, step, node: info.nodes.join(',') || undefined },
      });
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
    for (const n of nodes) if (!found[n]) throw new CommandFailedError(`no NodeAddr for ${n}`, { context: { node: n, step: 'node-addresses', logTail: tail(r.stdout) } });
    return Object.fromEntries(nodes.map((n) => [n, found[n]!]));
  }

  // ---------------------------------------------------------------- release / janitor

  /**
   * scancel the job (an already-gone job is success) and wait until it is no longer live
   * (bounded; a job stuck COMPLETING after a killed slurmd is reported, not waited on forever).
   */
  async release(jobId: string): Promise<{ state: JobState; settled: boolean }> {
    const r = await this.exec.run(scancelArgv(jobId), { timeoutMs: this.cmdTimeout, idempotent: true });
    if (r.code !== 0 && !/Invalid job id/i.test(r.stderr)) {
      throw new CommandFailedError(`scancel ${jobId} failed (rc=${r.code}): ${tail(r.stderr, 3)}`, {
        retryable: r.code !== 210, context: { jobId, step: 'release', logTail: tail(r.stderr) },
      });
    }
    const info = await this.waitFor(jobId, (j) => !isLive(j.state), this.releaseTimeout);
    return { state: info.state, settled: !isLive(info.state) };
  }

  /** Live jobs whose name starts with `prefix` (for the janitor). */
  async findOrphans(prefix: string): Promise<{ jobId: string; name: string; state: JobState; nodes: string[] }[]> {
    const r = await this.query(squeueLiveArgv(), { step: 'janitor' });
    const rows = parseJobLines(r.stdout).filter((j) => j.name.startsWith(prefix) && isLive(j.state));
    return Promise.all(rows.map(async (j) => ({ jobId: j.jobId, name: j.name, state: j.state, nodes: await this.expandNodes(j.nodeList) })));
  }

  // ---------------------------------------------------------------- steps

  /**
   * One single-task srun step on `node`, detached from the SSH session, output to `logFile`
   * (shared storage). Returns at once with a handle.
   */
  async launchStep(jobId: string, node: string, argv: string[], env: Record<string, string>, logFile: string, opts: StepOptions = {}): Promise<StepHandle> {
    const stepName = opts.stepName ?? `infersweep-step-${node}-${randomUUID().slice(0, 8)}`;
    const ctx: ErrorContext = { jobId, node, step: `launch:${stepName}` };
    const srun = srunArgv({ jobId, node, stepName, argv, env, runtime: opts.runtime ?? 'host', containerImage: opts.containerImage, containerMounts: opts.containerMounts, isolateEnv: opts.isolateEnv });
    await this.assertAlive(jobId, ctx.step);
    let r: RunResult;
    try {
      r = await this.exec.run(detachedArgv(logFile, srun), { timeoutMs: this.cmdTimeout });
    } catch (err) {
      throw new StepLaunchError(`launching step ${stepName} on ${node}: ${(err as Error).message}`, { retryable: err instanceof SshConnectionError, cause: err, context: ctx });
    }
    const pid = Number(r.stdout.trim().split('\n').pop());
    if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0) {
      throw new StepLaunchError(`launching step ${stepName} on ${node} failed (rc=${r.code})`, { context: { ...ctx, logTail: tail(r.stderr || r.stdout) } });
    }
    const handle: StepHandle = { jobId, node, stepName, logFile, launcherPid: pid };
    // Return once Slurm lists the step, so a watcher never mistakes "not registered yet" for "gone".
    const deadline = Date.now() + this.stepVisible;
    for (;;) {
      if (await this.findStep(handle)) return handle;
      if (!(await this.launcherAlive(handle))) {
        if (await this.findStep(handle)) return handle;
        const [log] = await this.fetchLogs([handle], { tailLines: 30 });
        if (log && /srun: error|slurmstepd[^:]*: error|execve|Unable to|Invalid/i.test(log.tail)) {
          throw new StepLaunchError(`step ${stepName} on ${node} failed to start`, { retryable: false, context: { ...ctx, logTail: log.tail } });
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
    const r = await this.exec.run(squeueStepsArgv(h.jobId), { timeoutMs: this.cmdTimeout, idempotent: true });
    if (r.code !== 0) {
      if (/Invalid job id/i.test(r.stderr)) return null;
      throw new CommandFailedError(`squeue -s -j ${h.jobId} failed: ${tail(r.stderr, 3)}`, { retryable: true, context: { jobId: h.jobId, node: h.node, step: h.stepName, logTail: tail(r.stderr) } });
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
        throw new CommandFailedError(`step ${h.stepName} of job ${h.jobId} still present after ${timeoutMs} ms`, { retryable: true, context: { jobId: h.jobId, node: h.node, step: h.stepName } });
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

  /** Copy each full log into `destDir` (local) as `<node>.log`; returns the local paths. */
  async copyLogs(handles: Pick<StepHandle, 'node' | 'logFile' | 'jobId'>[], destDir: string): Promise<{ node: string; path: string; bytes: number }[]> {
    await mkdir(destDir, { recursive: true });
    const out: { node: string; path: string; bytes: number }[] = [];
    for (const h of handles) {
      const r = await this.query(['cat', '--', h.logFile], { jobId: h.jobId, node: h.node, step: 'logs' }, { timeoutMs: 300_000 });
      const path = join(destDir, `${posix.basename(h.node)}.log`);
      await writeFile(path, r.stdout);
      out.push({ node: h.node, path, bytes: Buffer.byteLength(r.stdout) });
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
      squashPath, lockPath: `${squashPath}.lock`, lockTimeoutSeconds: req.lockTimeoutSeconds,
      tmpPath: `${squashPath}.tmp-${randomUUID().slice(0, 12)}`, image: req.image, importCommand: req.importCommand ?? ENROOT_IMPORT,
    });
    const ctx: ErrorContext = { step: 'import-image', image: req.image, squashPath };
    const r = await this.exec.run(argv, { timeoutMs: req.timeoutMs ?? req.lockTimeoutSeconds * 1000 + 3_600_000 });
    const logTail = tail(r.stderr || r.stdout);
    if (r.code === 0) return { squashPath, imported: /infersweep-image: imported/.test(r.stdout), durationMs: r.durationMs };
    if (r.code === IMPORT_EXIT.lockTimeout) throw new ImageLockTimeout(`lock on ${squashPath} not acquired within ${req.lockTimeoutSeconds} s`, { context: { ...ctx, logTail } });
    if (r.code === IMPORT_EXIT.importFailed && importErrorIsMissingImage(r.stderr)) throw new ImageMissingError(`image ${req.image} not found`, { context: { ...ctx, logTail } });
    throw new ImageImportError(`import of ${req.image} failed (rc=${r.code})`, { context: { ...ctx, logTail } });
  }
}
