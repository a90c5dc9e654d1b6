/**
 * Activities: thin adapters over libs/slurm, libs/topology and libs/agentx. Each one decides
 * retryable vs not explicitly (toFailure) and heartbeats its progress.
 */
import { Context, ApplicationFailure, activityInfo, heartbeat } from '@temporalio/activity';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { InfersweepError, bindPlan, sweepPlanSchema, type SweepPlan } from '@infersweep/topology';
import {
  SlurmCluster,
  executorForProfile,
  imageFileName,
  type Executor,
} from '@infersweep/slurm';
import { checkReadiness, pointResultSchema, runPoint as runAgentxPoint, waitForDrain, type PointResult, type Progress } from '@infersweep/agentx';
import type { AllocationEnd, PointSummary } from '@infersweep/sweep';
import type { Allocation, Deployment, PointRequest, StepRef, SweepActivities } from './types';

export interface ActivityDeps {
  /** Executor for a cluster profile (SSH to its login node, or local); cached per profile. */
  executorFor(plan: SweepPlan): Executor;
  /** Poll interval for readiness and allocation/server watch, ms. */
  pollMs: number;
}

// ---------------------------------------------------------------- errors

export class InvalidPlanError extends InfersweepError {
  constructor(message: string) {
    super(message, { retryable: false });
  }
}
/** The server step exited or stopped answering while the allocation is still alive. */
export class ServerLostError extends InfersweepError {
  constructor(message: string, context: Record<string, unknown>) {
    super(message, { retryable: false, context });
  }
}
/** The time guard: the next point cannot finish before the allocation ends. */
export class InsufficientTimeError extends InfersweepError {
  constructor(message: string, context: Record<string, unknown>) {
    super(message, { retryable: false, context });
  }
}

const LOSS = new Set(['AllocationLostError', 'ServerLostError', 'InsufficientTimeError']);

/** Map our typed errors to Temporal failures: type = class name, retry decided by the error. */
export function toFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof InfersweepError) {
    return ApplicationFailure.create({
      message: err.message,
      type: err.name,
      // losses are handled by the workflow (cleanup + re-allocate), never retried in place
      nonRetryable: LOSS.has(err.name) || !err.retryable,
      details: [err.context],
      cause: err,
    });
  }
  return err;
}

async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toFailure(err);
  }
}

function parsePlan(plan: unknown): SweepPlan {
  const r = sweepPlanSchema.safeParse(plan);
  if (!r.success) throw new InvalidPlanError(`the sweep plan does not validate: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return r.data;
}

// ---------------------------------------------------------------- helpers

const squashDirOf = (plan: SweepPlan) => plan.slurm.squashDir ?? join(plan.sharedDir, 'squash');

/** sha256 of the engine argument list every node shares (identifies the engine configuration). */
const fingerprint = (plan: SweepPlan) =>
  createHash('sha256').update(JSON.stringify([plan.engine, plan.nodes[0]?.commonArgs ?? []])).digest('hex').slice(0, 16);

/** Where runPoint writes a point: `<resultsDir>/points/c<N>/result.json` (+ requests.jsonl). */
const pointDir = (resultsDir: string, concurrency: number) => join(resultsDir, 'points', `c${concurrency}`);
export const pointFile = (resultsDir: string, concurrency: number) => join(pointDir(resultsDir, concurrency), 'result.json');

export function summarize(r: PointResult, resultPath: string, reused: boolean): PointSummary {
  const m = r.request_metrics;
  const orUndef = (x: number | null | undefined) => (x === null || x === undefined ? undefined : x);
  return {
    concurrency: r.conc,
    valid: r.submission_valid,
    reasons: r.submission_invalid_reasons,
    resultPath,
    reused,
    jobId: r.identity.jobId ?? undefined,
    attempt: r.identity.attempt,
    requestsProfiled: r.request_accounting.records_profiled,
    outputThroughputPerGpu: orUndef(m.throughput.per_gpu.output_tput_tps),
    totalThroughputPerGpu: orUndef(m.throughput.per_gpu.total_tput_tps),
    interactivityP50: orUndef(m.latency.intvty.p50),
    ttftP50Ms: m.latency.ttft.p50 === null ? undefined : m.latency.ttft.p50 * 1000,
    e2elP50Ms: m.latency.e2el.p50 === null ? undefined : m.latency.e2el.p50 * 1000,
  };
}

/** A stored result of this point for this sweep and this plan, if one exists and is valid. */
async function storedResult(resultsDir: string, sweepId: string, planHash: string, concurrency: number): Promise<PointSummary | undefined> {
  const file = pointFile(resultsDir, concurrency);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  const parsed = pointResultSchema.safeParse(JSON.parse(text));
  if (!parsed.success) return undefined;
  const r = parsed.data;
  if (r.identity.sweepId !== sweepId || r.identity.planHash !== planHash || !r.submission_valid) return undefined;
  return summarize(r, file, true);
}

async function writeAtomic(file: string, text: string): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

function cancellationSignal(): AbortSignal {
  return Context.current().cancellationSignal;
}

// ---------------------------------------------------------------- factory

export function createActivities(overrides: Partial<ActivityDeps> = {}): SweepActivities {
  const executors = new Map<string, Executor>();
  const deps: ActivityDeps = {
    executorFor:
      overrides.executorFor ??
      ((plan) => {
        const key = JSON.stringify(plan.login);
        let ex = executors.get(key);
        if (!ex) {
          ex = executorForProfile({ loginHost: plan.login });
          executors.set(key, ex);
        }
        return ex;
      }),
    pollMs: overrides.pollMs ?? 1000,
  };
  const slurmFor = (plan: SweepPlan) => new SlurmCluster(deps.executorFor(plan));

  /** Throws the typed loss when the allocation or any server step is gone. */
  const watch = async (slurm: SlurmCluster, dep: Deployment, step: string) => {
    await slurm.assertAlive(dep.jobId, step);
    for (const s of dep.steps) {
      const st = await slurm.stepStatus(s);
      if (st !== 'running') {
        // a step ends when its allocation ends: report the allocation's fate if that is the cause
        await slurm.assertAlive(dep.jobId, step);
        const logs = await slurm.fetchLogs([s], { tailLines: 30 }).catch(() => undefined);
        const tail = logs?.[0]?.tail ?? '';
        throw new ServerLostError(`server step ${s.stepName} on ${s.node} (rank ${s.rank}) is ${st}`, {
          jobId: dep.jobId,
          node: s.node,
          step,
          logTail: tail,
        });
      }
    }
  };

  return {
    async prepareSweep({ sweepId, planHash, plan, resultsDir, points }) {
      return guarded(async () => {
        parsePlan(plan);
        const found: PointSummary[] = [];
        for (const c of points) {
          const s = await storedResult(resultsDir, sweepId, planHash, c);
          if (s) found.push(s);
        }
        await writeAtomic(join(resultsDir, 'plan.json'), JSON.stringify(plan, null, 2));
        return found;
      });
    },

    async importImage({ plan: raw }) {
      return guarded(async () => {
        const plan = parsePlan(raw);
        if (plan.slurm.containerRuntime !== 'pyxis') return { note: `container runtime ${plan.slurm.containerRuntime}: no image to import` };
        const slurm = slurmFor(plan);
        const beat = setInterval(() => heartbeat({ phase: 'importing-image' }), 10_000);
        try {
          const r = await slurm.importImage({
            image: plan.image,
            squashDir: squashDirOf(plan),
            lockTimeoutSeconds: Math.max(60, plan.budgets.imageImportSeconds),
          });
          return { squashPath: r.squashPath, note: r.imported ? 'imported' : 'valid squash file reused' };
        } finally {
          clearInterval(beat);
        }
      });
    },

    async allocate({ plan: raw, jobName }) {
      return guarded(async () => {
        const plan = parsePlan(raw);
        const slurm = slurmFor(plan);
        const beat = setInterval(() => heartbeat({ phase: 'allocating', jobName }), 10_000);
        try {
          const a = await slurm.allocate({
            jobName,
            nodes: plan.slurm.nodes,
            // GPUs are requested only where the profile asks for gres (the local stack shares nodes)
            gpusPerNode: plan.slurm.gres ? plan.slurm.gpusPerNode : undefined,
            gres: plan.slurm.gres,
            exclusive: plan.slurm.exclusive,
            timeLimitMinutes: plan.slurm.timeLimitMinutes,
            partition: plan.slurm.partition,
            account: plan.slurm.account,
          });
          const allocation: Allocation = {
            jobId: a.jobId,
            jobName,
            nodes: a.nodes,
            headNode: a.headNode,
            timeLimitMinutes: plan.slurm.timeLimitMinutes,
            grantedAt: new Date().toISOString(),
          };
          return allocation;
        } finally {
          clearInterval(beat);
        }
      });
    },

    async launchServer({ sweepId, plan: raw, allocation, serverIndex }) {
      return guarded(async () => {
        const plan = parsePlan(raw);
        const slurm = slurmFor(plan);
        const addresses = await slurm.nodeAddresses(allocation.nodes);
        const bound = bindPlan(plan, {
          jobId: allocation.jobId,
          nodes: allocation.nodes,
          headAddress: addresses[allocation.nodes[0]!]!,
          nodeAddresses: allocation.nodes.map((n) => addresses[n]!),
        });
        const logDir = join(plan.sharedDir, 'infersweep', sweepId.replace(/[^A-Za-z0-9._-]+/g, '-'), `server-${serverIndex}`);
        const steps: StepRef[] = [];
        try {
          for (const n of bound.nodes) {
            const logFile = join(logDir, `rank${n.rank}-${n.node}.log`);
            const h = await slurm.launchStep(allocation.jobId, n.node, n.launchArgv, n.env, logFile, {
              runtime: plan.slurm.containerRuntime,
              containerImage: plan.slurm.containerRuntime === 'pyxis' ? join(squashDirOf(plan), imageFileName(plan.image)) : undefined,
              containerMounts: plan.slurm.mounts,
              stepName: `infersweep-server${serverIndex}-r${n.rank}`,
            });
            steps.push({ jobId: allocation.jobId, node: n.node, stepName: h.stepName, logFile, rank: n.rank, launcherPid: h.launcherPid });
          }
        } catch (err) {
          for (const s of steps) await slurm.stopStep(s).catch(() => undefined);
          throw err;
        }
        const deployment: Deployment = {
          jobId: allocation.jobId,
          nodes: allocation.nodes,
          headNode: allocation.nodes[0]!,
          serverIndex,
          steps,
          endpoints: bound.endpoints,
          metricsEndpoints: bound.metricsEndpoints,
          expectedEngines: bound.engineIds.labelled ? bound.engineIds.perMetricsEndpoint.flat().map(Number) : null,
          logDir,
          launchedAt: new Date().toISOString(),
        };
        return deployment;
      });
    },

    async waitReady({ plan: raw, deployment, startupBudgetSeconds }) {
      return guarded(async () => {
        const plan = parsePlan(raw);
        const slurm = slurmFor(plan);
        const started = Date.now();
        const deadline = started + startupBudgetSeconds * 1000;
        const signal = cancellationSignal();
        let last = 'not polled yet';
        for (let polls = 0; ; polls++) {
          await watch(slurm, deployment, 'readiness');
          const r = await checkReadiness(deployment.endpoints[0]!, plan.model.servedName, deployment.expectedEngines);
          if (r.ready) return { seconds: (Date.now() - started) / 1000 };
          last = r.detail;
          heartbeat({ phase: 'waiting-ready', polls, detail: last, elapsedSeconds: Math.round((Date.now() - started) / 1000) });
          if (Date.now() > deadline) {
            const logs = await slurm.fetchLogs(deployment.steps, { tailLines: 40 }).catch(() => []);
            throw new ServerLostError(`server not ready after ${startupBudgetSeconds} s: ${last}`, {
              jobId: deployment.jobId,
              node: deployment.headNode,
              step: 'readiness',
              logTail: logs.map((l) => `--- ${l.node}\n${l.tail}`).join('\n'),
            });
          }
          await new Promise((res) => setTimeout(res, deps.pollMs));
          if (signal.aborted) throw new InfersweepError('readiness wait cancelled', { retryable: false });
        }
      });
    },

    async runPoint(req: PointRequest) {
      return guarded(async () => {
        const plan = parsePlan(req.plan);
        const reuse = await storedResult(req.resultsDir, req.sweepId, req.planHash, req.concurrency);
        if (reuse) return reuse;
        const slurm = slurmFor(plan);
        const dep = req.deployment;

        // a dead allocation is a loss, not a lack of time: check liveness first
        await watch(slurm, dep, `point:c=${req.concurrency}`);
        // time guard: never start a point the allocation cannot finish
        const margin = 30;
        const budget = plan.pointBudgets.find((b) => b.concurrency === req.concurrency)?.totalSeconds ?? req.pointBudgetSeconds;
        if (!(await slurm.canFinish(dep.jobId, budget, margin))) {
          const left = await slurm.timeLeft(dep.jobId);
          throw new InsufficientTimeError(
            `allocation ${dep.jobId} has ${left ?? '?'} s left, point c=${req.concurrency} needs ${budget} s + ${margin} s margin`,
            { jobId: dep.jobId, step: `point:c=${req.concurrency}`, timeLeftSeconds: left },
          );
        }

        const signal = cancellationSignal();
        const abort = new AbortController();
        signal.addEventListener('abort', () => abort.abort(signal.reason), { once: true });
        let lost: unknown;
        const monitor = setInterval(() => {
          watch(slurm, dep, `point:c=${req.concurrency}`).catch((err) => {
            if (err instanceof InfersweepError && (err.name === 'AllocationLostError' || err.name === 'ServerLostError')) {
              lost = err;
              abort.abort(err);
            }
          });
        }, Math.max(500, deps.pollMs * 2));
        try {
          if (req.serverUsed) {
            heartbeat({ phase: 'draining', concurrency: req.concurrency });
            await waitForDrain(dep.metricsEndpoints, { ...plan.agentx.drain, family: 'vllm' }, { signal: abort.signal });
          }
          const outDir = pointDir(req.resultsDir, req.concurrency);
          const info = activityInfo();
          const result = await runAgentxPoint(
            {
              concurrency: req.concurrency,
              endpoints: dep.endpoints,
              metricsEndpoints: dep.metricsEndpoints,
              servedModel: plan.model.servedName,
              settings: plan.agentx,
              gpuCount: plan.topology.gpus,
              expectedEngines: dep.expectedEngines,
              identity: {
                sweepId: req.sweepId,
                planHash: req.planHash,
                orientation: plan.orientation,
                cluster: plan.cluster,
                topology: plan.topology,
                image: plan.image,
                model: plan.model.servedName,
                engineArgsFingerprint: fingerprint(plan),
                jobId: dep.jobId,
                nodes: dep.nodes,
                attempt: req.attempt,
                allocationAttempt: req.allocationAttempt,
                deploymentPolicy: req.policy,
                activityAttempt: info.attempt,
              },
              outDir,
            },
            {
              signal: abort.signal,
              onProgress: (p: Progress) => heartbeat({ ...p, concurrency: req.concurrency }),
            },
          );
          return summarize(result, pointFile(req.resultsDir, req.concurrency), false);
        } catch (err) {
          if (lost) throw lost;
          throw err;
        } finally {
          clearInterval(monitor);
        }
      });
    },

    async captureLogs({ plan, deployment, destDir }) {
      return guarded(async () => {
        const slurm = slurmFor(parsePlan(plan));
        const copied = await slurm.copyLogs(deployment.steps, destDir);
        const tails = await slurm.fetchLogs(deployment.steps, { tailLines: 20 });
        return { files: copied.map((c) => c.path), tails: Object.fromEntries(tails.map((t) => [t.node, t.tail])) };
      });
    },

    async stopServer({ plan, deployment }) {
      return guarded(async () => {
        const slurm = slurmFor(parsePlan(plan));
        for (const s of deployment.steps) await slurm.stopStep(s);
      });
    },

    async release({ plan, jobId, jobName }) {
      return guarded(async () => {
        const slurm = slurmFor(parsePlan(plan));
        const ids = jobId ? [jobId] : (await slurm.jobsNamed(jobName)).map((j) => j.jobId);
        if (ids.length === 0) return { ended: 'released' as AllocationEnd, state: 'GONE', reason: `no job named ${jobName}` };
        let result: { ended: AllocationEnd; state: string; reason?: string } = { ended: 'released', state: 'GONE' };
        for (const id of ids) {
          const before = await slurm.describe(id);
          const after = await slurm.release(id);
          if (!after.settled) throw new InfersweepError(`job ${id} still ${after.state} after scancel`, { retryable: true, context: { jobId: id, step: 'release' } });
          // live when we came: we released it; already ended: report how Slurm ended it
          const ended: AllocationEnd = ['RUNNING', 'PENDING', 'COMPLETING', 'CONFIGURING', 'SUSPENDED'].includes(before.state)
            ? 'released'
            : ((['TIMEOUT', 'NODE_FAIL', 'CANCELLED', 'PREEMPTED', 'FAILED'] as const).find((x) => x === before.state) ?? 'GONE');
          result = { ended, state: before.state, reason: before.reason || undefined };
        }
        return result;
      });
    },
  };
}
