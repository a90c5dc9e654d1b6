/**
 * Steps of a job: one single-task srun per node, detached from the SSH session (a dropped channel
 * or a restarted worker leaves it running), found by name, stopped by `scancel J.S`.
 */
import { randomUUID } from 'node:crypto';
import { tail, type ErrorContext } from '@infersweep/core';
import type { RunResult } from './executor';
import { CommandFailedError, SshConnectionError, StepLaunchError, type SetupError } from './errors';
import { detachedArgv, scancelArgv, squeueStepsArgv, srunArgv, type StepRuntime } from './commands';
import { parseStepLines } from './parse';
import { fetchLogs, type LogRef } from './logs';
import { allEnded, setupErrorOf, sleep, type SlurmQueries } from './queries';

export interface StepHandle extends LogRef {
  stepName: string;
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

type StepRef = Pick<StepHandle, 'jobId' | 'node' | 'stepName' | 'launcherPid'>;

/**
 * One single-task srun step on `node`, detached from the SSH session, output to `logFile`
 * (shared storage). Returns with a handle once Slurm lists the step.
 */
export async function launchStep(
  q: SlurmQueries,
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
    ...(opts.loginEnv ? { loginEnv: opts.loginEnv } : {}),
    secretNames,
  });
  await q.assertAlive(jobId, ctx.step);
  // idempotent launch: a same-name step left by an earlier attempt is stopped first
  if (opts.replaceExisting !== false && (await findStep(q, { jobId, node, stepName })))
    await stopStep(q, { jobId, node, stepName });
  const launcherPid = await startDetached(
    q,
    detachedArgv(logFile, srun),
    secretNames.length ? opts.secretEnv : undefined,
    ctx,
  );
  return untilListed(q, { jobId, node, stepName, logFile, launcherPid }, ctx);
}

/** Start the detached srun on the login node; its pid. */
async function startDetached(
  q: SlurmQueries,
  argv: string[],
  secretEnv: Record<string, string> | undefined,
  ctx: ErrorContext,
): Promise<number> {
  const what = `launching step ${ctx.step?.replace(/^launch:/, '')} on ${ctx.node}`;
  let r: RunResult;
  try {
    r = await q.exec.run(argv, { timeoutMs: q.cmdTimeout, ...(secretEnv ? { secretEnv } : {}) });
  } catch (err) {
    throw new StepLaunchError(`${what}: ${(err as Error).message}`, {
      kind: err instanceof SshConnectionError ? 'transient' : 'fatal',
      cause: err,
      context: ctx,
    });
  }
  const pid = Number(r.stdout.trim().split('\n').pop());
  if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0) {
    const setup = r.code === 127 ? setupErrorOf(r.code, r.stderr, 'bash', what, ctx) : undefined;
    if (setup) throw setup;
    throw new StepLaunchError(`${what} failed (rc=${r.code})`, {
      context: { ...ctx, logTail: tail(r.stderr || r.stdout) },
    });
  }
  return pid;
}

/**
 * Wait until Slurm lists the step, so a watcher never mistakes "not registered yet" for "gone". A listed step
 * counts only while its srun launcher lives: a program that does not exist is listed for a moment before its
 * execve fails, and that failure must be read from its log (a SetupError naming the program), not returned.
 */
async function untilListed(q: SlurmQueries, handle: StepHandle, ctx: ErrorContext): Promise<StepHandle> {
  const { stepName, node } = handle;
  const deadline = Date.now() + q.stepVisible;
  for (;;) {
    const listed = await findStep(q, handle);
    if (!(await q.launcherAlive(handle))) return exitedStep(q, handle, ctx);
    if (listed) return handle;
    if (Date.now() >= deadline) {
      await stopStep(q, handle).catch(() => undefined);
      throw new StepLaunchError(`step ${stepName} on ${node} not visible in squeue after ${q.stepVisible} ms`, {
        context: ctx,
      });
    }
    await sleep(q.poll);
  }
}

/** The step's launcher has exited: a start that failed (its log says why) throws; else it ran and already finished. */
async function exitedStep(q: SlurmQueries, handle: StepHandle, ctx: ErrorContext): Promise<StepHandle> {
  const { stepName, node } = handle;
  const [log] = await fetchLogs(q, [handle], { tailLines: 30 });
  const setup = log ? setupErrorIn(log.tail, handle, ctx) : undefined;
  if (setup) throw setup;
  if (log && /srun: error|slurmstepd[^:]*: error|execve|Unable to|Invalid/i.test(log.tail)) {
    throw new StepLaunchError(`step ${stepName} on ${node} failed to start`, {
      kind: 'fatal',
      context: { ...ctx, logTail: log.tail },
    });
  }
  return handle;
}

/** The SetupError naming the missing tool a step's log tail shows (exit 127, "command not found", execve's "No such file"), else undefined. Pure. */
export const setupErrorIn = (logTail: string, h: Pick<StepHandle, 'stepName' | 'node'>, ctx: ErrorContext) =>
  setupErrorOf(null, logTail, '', `step ${h.stepName} on ${h.node} failed to start`, ctx);

/**
 * A gone step's log, read once: its tail, and the SetupError naming the missing tool when the tail shows one (exit 127,
 * "command not found", execve's "No such file"). Slurm lists such a step for a moment before its execve fails, so a
 * launch can return its handle first; whoever then sees the step gone reads this before calling it a lost server
 * (libs/orchestrator/src/activities/gone-step.ts). An unreadable log reads as an empty tail.
 */
export async function goneStepLog(
  q: SlurmQueries,
  h: LogRef & Pick<StepHandle, 'stepName'>,
  ctx: ErrorContext,
): Promise<{ logTail: string; setup?: SetupError }> {
  const [log] = await fetchLogs(q, [h], { tailLines: 30 }).catch(() => []);
  const logTail = log?.tail ?? '';
  const setup = logTail ? setupErrorIn(logTail, h, ctx) : undefined;
  return setup ? { logTail, setup } : { logTail };
}

/** The step of this name in the job, as squeue lists it (null: none, or the job is gone). */
export async function findStep(
  q: SlurmQueries,
  h: Pick<StepHandle, 'jobId' | 'node' | 'stepName'>,
): Promise<{ stepId: string } | null> {
  const r = await q.read(squeueStepsArgv(h.jobId));
  if (r.code !== 0) {
    if (/Invalid job id/i.test(r.stderr)) return null;
    throw new CommandFailedError(`squeue -s -j ${h.jobId} failed: ${tail(r.stderr, 3)}`, {
      kind: 'transient',
      context: { jobId: h.jobId, node: h.node, step: h.stepName, logTail: tail(r.stderr) },
    });
  }
  const s = parseStepLines(r.stdout).find((x) => x.name === h.stepName);
  return s ? { stepId: s.stepId } : null;
}

export async function stepStatus(q: SlurmQueries, h: StepRef): Promise<StepState> {
  try {
    if (await findStep(q, h)) return 'running';
    return (await q.launcherAlive(h)) ? 'running' : 'exited';
  } catch {
    return 'unknown';
  }
}

/**
 * {@link stopStep} of every step at once (a deployment's ranks end in parallel: one slow to exit no longer
 * delays the others' scancel); the first failure is thrown once every stop has ended.
 */
export async function stopSteps(q: SlurmQueries, handles: StepRef[], timeoutMs?: number): Promise<void> {
  await allEnded(handles.map((h) => stopStep(q, h, timeoutMs)));
}

/** scancel J.S (a step that is already gone is success); waits until the step has left squeue. */
export async function stopStep(q: SlurmQueries, h: StepRef, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await findStep(q, h);
    if (!s && !(await q.launcherAlive(h))) return;
    if (s) await q.exec.run(scancelArgv(s.stepId), { timeoutMs: q.cmdTimeout, idempotent: true });
    if (Date.now() >= deadline) {
      throw new CommandFailedError(`step ${h.stepName} of job ${h.jobId} still present after ${timeoutMs} ms`, {
        kind: 'transient',
        context: { jobId: h.jobId, node: h.node, step: h.stepName },
      });
    }
    await sleep(q.poll);
  }
}
