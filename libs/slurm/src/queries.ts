/**
 * The Slurm queries every part of the cluster API stands on: one Executor (local or SSH to a login
 * node), read-only commands asked again while slurmctld gives no answer, and the job's state
 * (describe, liveness assertions, the time guard, release). Every operation is idempotent.
 */
import { InfersweepError, tail, type ErrorContext } from '@infersweep/core';
import type { Executor, RunOptions, RunResult } from './executor';
import { AllocationLostError, CommandFailedError, SetupError } from './errors';
import { shownCommand } from './executor';
import {
  hostnamesArgv,
  pidAliveArgv,
  scancelArgv,
  showNodesArgv,
  sinfoNodesArgv,
  squeueByNameArgv,
  squeueJobArgv,
  squeueLiveArgv,
  squeueTimesArgv,
} from './commands';
import {
  isLive,
  isPlainJobId,
  missingTool,
  parseHeldSeconds,
  parseHostnames,
  parseJobLines,
  parseJobLinesTolerant,
  parseNodeAddresses,
  parseNodeStates,
  type JobRow,
  type JobState,
} from './parse';

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

/**
 * Seconds a job has left by one read of it: a job that is not RUNNING has none; null when squeue gives no duration
 * (UNLIMITED, N/A; infersweep's allocations always ask for a time limit).
 */
export function jobTimeLeft(info: Pick<JobInfo, 'state' | 'timeLeftSeconds'>): number | null {
  return info.state === 'RUNNING' ? info.timeLeftSeconds : 0;
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

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
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
export function setupErrorOf(
  code: number | null,
  output: string,
  fallback: string,
  what: string,
  context: ErrorContext,
): SetupError | undefined {
  const tool = missingTool(code, output, fallback);
  if (tool === undefined) return undefined;
  return new SetupError(
    tool,
    `${what}: \`${tool}\` was not found on the cluster${code === null ? '' : ` (exit ${code})`}; install it or put it on the login user's PATH (a module load in the login shell's rc file, or the image for container steps)`,
    { context: { ...context, logTail: tail(output) } },
  );
}

/**
 * Node lists already expanded, by their text. Slurm expands a hostlist by its syntax alone (`node[1-2]` is
 * node1,node2 whatever the node table holds), so one answer serves every later ask in this process: every
 * `describe` of a job asked a second SSH command of the login node for it (twice per activity's ownership
 * check, every poll of a queued allocation). Cleared whole when full.
 */
const expandedNodeLists = new Map<string, readonly string[]>();
const EXPANDED_NODE_LISTS_MAX = 4096;

/** The Slurm queries over one Executor: reading jobs, their state and their release. */
export class SlurmQueries {
  readonly poll: number;
  readonly cmdTimeout: number;
  readonly releaseTimeout: number;
  readonly stepVisible: number;
  readonly readAttempts: number;
  readonly pendingPoll: number;
  readonly withdrawTimeout: number;

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
  async read(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    let last: RunResult | undefined;
    let lastErr: unknown;
    for (let i = 0; i < this.readAttempts; i++) {
      if (i > 0) await sleep(Math.min(4_000, 500 * 2 ** (i - 1)), opts.signal);
      try {
        last = await this.exec.run(argv, { timeoutMs: this.cmdTimeout, idempotent: true, ...opts });
        lastErr = undefined;
        if (!noAnswer(last)) return last;
      } catch (err) {
        if (!(err instanceof InfersweepError) || err.kind !== 'transient') throw err;
        lastErr = err;
      }
    }
    if (lastErr) throw lastErr;
    return last!;
  }

  /** Run a read-only / idempotent Slurm command; non-zero exit → CommandFailedError with stderr. */
  async query(argv: string[], context: ErrorContext, opts: RunOptions = {}): Promise<RunResult> {
    const r = await this.read(argv, opts);
    if (r.code !== 0) {
      const setup = r.code === 127 ? setupErrorOf(r.code, r.stderr, argv[0]!, `${argv[0]}`, context) : undefined;
      if (setup) throw setup;
      throw new CommandFailedError(
        `${argv[0]} failed (rc=${r.code}${r.signal ? ` signal=${r.signal}` : ''}): ${tail(r.stderr, 3)}`,
        {
          kind: 'transient',
          context: { ...context, logTail: tail(r.stderr || r.stdout), command: shownCommand(argv.join(' ')) },
        },
      );
    }
    return r;
  }

  /** `scontrol show hostnames` of a node list, asked once per list and process ({@link expandedNodeLists}). */
  async expandNodes(nodeList: string): Promise<string[]> {
    if (!nodeList) return [];
    const known = expandedNodeLists.get(nodeList);
    if (known) return [...known];
    const nodes = parseHostnames((await this.query(hostnamesArgv(nodeList), { step: 'describe' })).stdout);
    if (nodes.length > 0) {
      if (expandedNodeLists.size >= EXPANDED_NODE_LISTS_MAX) expandedNodeLists.clear();
      expandedNodeLists.set(nodeList, nodes);
    }
    return [...nodes];
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

  // ---------------------------------------------------------------- describe / liveness

  /** State, reason, expanded nodes, time left. A job slurmctld no longer knows is `GONE`. */
  async describe(jobId: string): Promise<JobInfo> {
    const r = await this.read(squeueJobArgv(jobId));
    if (r.code === 127)
      throw setupErrorOf(r.code, r.stderr, 'squeue', `squeue -j ${jobId}`, { jobId, step: 'describe' })!;
    if (r.code !== 0 && /Invalid job id/i.test(r.stderr)) {
      return {
        jobId,
        name: '',
        state: 'GONE',
        reason: 'Invalid job id',
        nodes: [],
        headNode: null,
        timeLeftSeconds: null,
        endTime: null,
      };
    }
    if (r.code !== 0) {
      throw new CommandFailedError(`squeue -j ${jobId} failed (rc=${r.code}): ${tail(r.stderr, 3)}`, {
        kind: 'transient',
        context: { jobId, step: 'describe', logTail: tail(r.stderr) },
      });
    }
    const row = parseJobLines(r.stdout).find((j) => j.jobId === jobId);
    if (!row)
      return {
        jobId,
        name: '',
        state: 'GONE',
        reason: 'not in squeue',
        nodes: [],
        headNode: null,
        timeLeftSeconds: null,
        endTime: null,
      };
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

  /** Seconds the job held its nodes, by slurmctld's own start and end times; null when it has none (yet). */
  async heldSeconds(jobId: string): Promise<number | null> {
    const r = await this.read(squeueTimesArgv(jobId));
    return r.code === 0 ? parseHeldSeconds(r.stdout) : null;
  }

  /** The nodes of a partition (every partition's when none is named), each once, in sinfo's order. */
  async partitionNodes(partition?: string): Promise<string[]> {
    return [...new Set((await this.nodeStates(partition)).map((n) => n.node))];
  }

  /** Each node of a partition with its compact state (`idle`, `alloc`, `down*`, `drain`, …). */
  async nodeStates(partition?: string): Promise<{ node: string; state: string }[]> {
    const r = await this.query(sinfoNodesArgv(partition), { step: 'node-states' });
    return parseNodeStates(r.stdout);
  }

  /** NodeAddr of each node (what other nodes and the client use to reach it). */
  async nodeAddresses(nodes: string[]): Promise<Record<string, string>> {
    if (nodes.length === 0) return {};
    const r = await this.query(showNodesArgv(nodes), { step: 'node-addresses', node: nodes.join(',') });
    const found = parseNodeAddresses(r.stdout);
    for (const n of nodes)
      if (!found[n])
        throw new CommandFailedError(`no NodeAddr for ${n}`, {
          context: { node: n, step: 'node-addresses', logTail: tail(r.stdout) },
        });
    return Object.fromEntries(nodes.map((n) => [n, found[n]!]));
  }

  /** Is the detached launcher (salloc or srun) with this pid still alive on the login node? */
  async launcherAlive(h: { launcherPid?: number; stepName: string }): Promise<boolean> {
    if (!h.launcherPid) return false;
    const r = await this.exec.run(pidAliveArgv(h.launcherPid, h.stepName), {
      timeoutMs: this.cmdTimeout,
      idempotent: true,
    });
    return r.stdout.trim() === 'alive';
  }

  // ---------------------------------------------------------------- release / janitor

  /**
   * scancel the job (an already-gone job is success) and wait until it is no longer live
   * (bounded by `timeoutMs`, default `releaseTimeoutMs`; a job stuck COMPLETING after a killed slurmd
   * is reported, not waited on forever).
   */
  async release(jobId: string, timeoutMs = this.releaseTimeout): Promise<{ state: JobState; settled: boolean }> {
    const r = await this.exec.run(scancelArgv(jobId), { timeoutMs: this.cmdTimeout, idempotent: true });
    if (r.code === 127)
      throw setupErrorOf(r.code, r.stderr, 'scancel', `scancel ${jobId}`, { jobId, step: 'release' })!;
    if (r.code !== 0 && !/Invalid job id/i.test(r.stderr)) {
      throw new CommandFailedError(`scancel ${jobId} failed (rc=${r.code}): ${tail(r.stderr, 3)}`, {
        kind: r.code !== 210 ? 'transient' : 'fatal',
        context: { jobId, step: 'release', logTail: tail(r.stderr) },
      });
    }
    const info = await this.waitFor(jobId, (j) => !isLive(j.state), timeoutMs);
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
      ours.map(async (j) => ({
        jobId: j.jobId,
        name: j.name,
        state: j.state,
        nodes: await this.expandNodes(j.nodeList),
      })),
    );
  }
}

/**
 * Every promise's value, in order, once all have ended; the first failure is thrown only then, so no work started
 * here is still running when the caller moves on (parallel step stops, log copies).
 */
export async function allEnded<T>(work: Promise<T>[]): Promise<T[]> {
  const ended = await Promise.allSettled(work);
  const failed = ended.find((c): c is PromiseRejectedResult => c.status === 'rejected');
  if (failed) throw failed.reason;
  return ended.map((c) => (c as PromiseFulfilledResult<T>).value);
}
