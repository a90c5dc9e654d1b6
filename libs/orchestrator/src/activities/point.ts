/** One ConcurrencyPoint: liveness first, the time guard, the drain gate, the AgentX client, the record. */
import { activityInfo, log } from '@temporalio/activity';
import { contentHash, ResultsLayout } from '@infersweep/core';
import type { SweepPlan } from '@infersweep/topology';
import {
  RecordInvalidError,
  dcgmExporterTargets,
  pointSummary,
  runPointWithClient as runAgentxPoint,
  waitForDrain,
  type PointGpuTelemetry,
  type Progress,
} from '@infersweep/agentx';
import type { ActivityContext } from './context';
import { fitsInTime, jobTimeLeft, type JobInfo, type SlurmCluster } from '@infersweep/slurm';
import { InsufficientTimeError } from './errors';
import { goneStepError } from './gone-step';
import { attemptSignal, progress } from './liveness';
import { headNodeAiperfRunner } from './aiperf-step';
import { storedResult } from './results-store';
import type { PointSummary } from '@infersweep/sweep';
import type { PointActivities, PointRequest, StepRef } from './types';
import { gpuHourPrice } from '../worker-settings';

/** Content hash of the engine and the argument list every node shares (identifies the engine configuration). */
const fingerprint = (plan: SweepPlan) => contentHash([plan.engine, plan.nodes[0]?.commonArgs ?? []]);

/** Seconds the time guard keeps free after a point's budget. */
const TIME_GUARD_MARGIN_SECONDS = 30;

export function pointActivities(ctx: ActivityContext): PointActivities {
  return {
    async runPoint(req) {
      ctx.assertOwnSweep(req.sweepId);
      ctx.assertResultsDir(req.resultsDir, 'resultsDir');
      // a re-measure (a search's window) or a replicate is a fresh measurement: never a stored result
      const reuse =
        (req.window ?? 1) > 1 || req.replicate !== undefined
          ? undefined
          : await storedResult(req.resultsDir, req.sweepId, req.planHash, req.concurrency);
      if (reuse) return reuse;
      const { plan, slurm } = await ctx.open(req);
      await ctx.assertOwnDeployment(slurm, plan, req.deployment);
      const dep = req.deployment;
      const step = `point:c=${req.concurrency}`;
      progress({ phase: 'checking', concurrency: req.concurrency });
      // one read of the job for both checks: a dead allocation is a loss, not a lack of time (with two reads, a node
      // failing between them made the job's 0 s left an InsufficientTimeError, and the loss went unclassified)
      timeGuard(await slurm.assertAlive(dep.jobId, step), plan, req, step);

      // a cancelled activity or a stalled attempt (./liveness.ts) stops the client and its aiperf step
      const signal = attemptSignal();
      const abort = new AbortController();
      signal.addEventListener('abort', () => abort.abort(signal.reason), { once: true });
      let lost: unknown;
      const live = ctx.watchDeployment(slurm, dep, step, (err) => {
        lost = err;
        abort.abort(err);
      });
      try {
        const drainStarted = Date.now();
        if (req.serverUsed) {
          progress(
            { phase: 'draining', concurrency: req.concurrency },
            { stallSeconds: plan.agentx.drain.deadlineSeconds + 300 },
          );
          await waitForDrain(dep.metricsEndpoints, { ...plan.agentx.drain, family: 'vllm' }, { signal: abort.signal });
        }
        const drain = (Date.now() - drainStarted) / 1000;
        const measured = await measure(ctx, slurm, plan, req, abort.signal);
        // the drain gate's time, for the GPU-hour ledger (libs/sweep/src/ledger.ts)
        const summary = { ...measured, phaseSeconds: { ...measured.phaseSeconds, drain } };
        // requests that failed because the server died are a lost server, not an invalid measurement (the client
        // can see the loss before the liveness watch's consecutive polls do); a dead allocation first: a node set
        // down ends the job NODE_FAIL and then kills its steps, and that loss is the node's, not the server's
        if (!summary.valid && !lost) {
          await slurm.assertAlive(dep.jobId, step);
          await throwIfServerGone(slurm, dep.steps, step, summary.reasons[0]);
        }
        if (lost) throw lost;
        return summary;
      } catch (err) {
        if (lost) throw lost;
        return invalidRecord(err, req);
      } finally {
        await live.stop();
      }
    },
  };
}

/** Time guard: never start a point the allocation cannot finish (`job`: the read that found it alive). */
export function timeGuard(job: JobInfo, plan: SweepPlan, req: PointRequest, step: string): void {
  const jobId = req.deployment.jobId;
  const margin = TIME_GUARD_MARGIN_SECONDS;
  const budget =
    plan.pointBudgets.find((b) => b.concurrency === req.concurrency)?.totalSeconds ?? req.pointBudgetSeconds;
  const left = jobTimeLeft(job);
  if (fitsInTime(left, budget, margin)) return;
  throw new InsufficientTimeError(
    `allocation ${jobId} has ${left ?? '?'} s left, point c=${req.concurrency} needs ${budget} s + ${margin} s margin`,
    {
      jobId,
      step,
      timeLeftSeconds: left,
    },
  );
}

/** The point measured by the plan's client (aiperf on the head node when `agentx.aiperf.runOn` says so); its summary. */
async function measure(
  ctx: ActivityContext,
  slurm: SlurmCluster,
  plan: SweepPlan,
  req: PointRequest,
  signal: AbortSignal,
): Promise<PointSummary> {
  const dep = req.deployment;
  const layout = new ResultsLayout(req.resultsDir);
  const onHead = plan.agentx.client === 'aiperf' && plan.agentx.aiperf.runOn === 'head-node';
  const aiperfRunner = onHead
    ? headNodeAiperfRunner({
        slurm,
        plan,
        deployment: dep,
        sweepId: req.sweepId,
        concurrency: req.concurrency,
        pollMs: ctx.deps.pollMs,
      })
    : undefined;
  const result = await runAgentxPoint(
    {
      concurrency: req.concurrency,
      endpoints: dep.endpoints,
      metricsEndpoints: dep.metricsEndpoints,
      servedModel: plan.model.servedName,
      tokenizer: plan.model.tokenizer,
      settings: plan.agentx,
      gpuCount: plan.topology.gpus,
      expectedEngines: dep.expectedEngines,
      identity: pointIdentity(plan, req),
      outDir: pointDirOf(layout, req),
      trustRemoteCodeTokenizers: ctx.deps.settings.trustRemoteCodeTokenizers,
      ...(plan.engine.maxModelLen === undefined ? {} : { maxContextLength: plan.engine.maxModelLen }),
      ...(plan.search?.slo?.goodput ? { goodput: plan.search.slo.goodput } : {}),
      ...(plan.disaggregation === undefined ? {} : { metricsRoles: metricsRolesOf(plan.disaggregation) }),
      ...(dep.requestHeaders === undefined ? {} : { requestHeaders: dep.requestHeaders }),
      ...(plan.gpuTelemetry === undefined
        ? {}
        : { gpuTelemetry: await gpuTelemetryOf(slurm, plan, dep.nodes, ctx.deps.settings.gpuHourPrices) }),
      ...(plan.speculative?.expectedAcceptanceLength === undefined
        ? {}
        : { expectedAcceptanceLength: plan.speculative.expectedAcceptanceLength }),
    },
    {
      signal,
      onProgress: (p: Progress) => progress({ ...p, concurrency: req.concurrency }),
      ...(aiperfRunner ? { aiperfRunner } : {}),
    },
  );
  return pointSummary(result, { resultPath: recordOf(layout, req), reused: false });
}

/** The allocation's DCGM exporters (each node's NodeAddr, the plan's port) and the worker's GPU-hour price. */
async function gpuTelemetryOf(
  slurm: SlurmCluster,
  plan: SweepPlan,
  nodes: string[],
  gpuHourPrices: Record<string, number>,
): Promise<PointGpuTelemetry> {
  const telemetry = plan.gpuTelemetry!;
  const addresses = await slurm.nodeAddresses(nodes);
  const price = gpuHourPrice({ gpuHourPrices }, plan.slurm.gpu);
  return {
    targets: dcgmExporterTargets(
      nodes.map((node) => ({ node, address: addresses[node]! })),
      telemetry.dcgmExporterPort,
    ),
    intervalSeconds: telemetry.intervalSeconds,
    ...(price === undefined ? {} : { pricePerGpuHour: price }),
    ...(plan.disaggregation === undefined ? {} : { nodeRoles: nodeRolesOf(plan.disaggregation, nodes, addresses) }),
  };
}

/**
 * A P/D plan's role of each allocation node, by name (pure): its workers' node ranks (plan-disagg.ts `workerNodes`)
 * on the allocation's nodes. A node whose address it shares with a node of the other role gets none: one exporter
 * answers for both (libs/agentx/src/server/dcgm-sampler.ts scrapes an address once), its GPUs cannot be told apart.
 */
export function nodeRolesOf(
  pd: NonNullable<SweepPlan['disaggregation']>,
  nodes: readonly string[],
  addresses: Readonly<Record<string, string>>,
): Record<string, 'prefill' | 'decode'> {
  const roleOf = new Map<string, 'prefill' | 'decode'>();
  for (const r of pd.roles) for (const rank of r.workerNodes.flat()) if (nodes[rank]) roleOf.set(nodes[rank], r.role);
  const rolesAt = new Map<string, Set<string>>();
  for (const [node, role] of roleOf) {
    const at = addresses[node] ?? node;
    rolesAt.set(at, (rolesAt.get(at) ?? new Set()).add(role));
  }
  return Object.fromEntries([...roleOf].filter(([node]) => rolesAt.get(addresses[node] ?? node)!.size === 1));
}

const pointDirOf = (layout: ResultsLayout, req: PointRequest): string =>
  req.replicate === undefined
    ? layout.pointDir(req.concurrency, req.window)
    : layout.replicateDir(req.concurrency, req.replicate);

const recordOf = (layout: ResultsLayout, req: PointRequest): string =>
  req.replicate === undefined
    ? layout.pointRecord(req.concurrency, req.window)
    : layout.replicateRecord(req.concurrency, req.replicate);

function pointIdentity(plan: SweepPlan, req: PointRequest) {
  const dep = req.deployment;
  return {
    sweepId: req.sweepId,
    planHash: req.planHash,
    orientation: plan.orientation,
    cluster: plan.cluster,
    topology: plan.topology,
    image: plan.image,
    model: plan.model.servedName,
    engineArgsFingerprint: fingerprint(plan),
    hw: plan.slurm.gpu.toLowerCase(),
    jobId: dep.jobId,
    nodes: dep.nodes,
    attempt: req.attempt,
    allocationAttempt: req.allocationAttempt,
    deploymentPolicy: req.policy,
    activityAttempt: activityInfo().attempt,
  };
}

/** A record that does not validate: an invalid point with its reason (raw requests kept); anything else rethrown. */
function invalidRecord(err: unknown, req: PointRequest): PointSummary {
  if (!(err instanceof RecordInvalidError)) throw err;
  log.warn(err.message, { concurrency: req.concurrency, recordPath: err.recordPath });
  return {
    concurrency: req.concurrency,
    valid: false,
    reasons: err.reasons,
    resultPath: err.recordPath ?? recordOf(new ResultsLayout(req.resultsDir), req),
    reused: false,
    jobId: req.deployment.jobId,
    attempt: req.attempt,
    requestsProfiled: 0,
  };
}

/** Throws when a server step of the point has exited: a SetupError or a ServerLostError with its log tail (./gone-step.ts). */
async function throwIfServerGone(
  slurm: SlurmCluster,
  steps: StepRef[],
  step: string,
  why: string | undefined,
): Promise<void> {
  for (const s of steps) {
    if ((await slurm.stepStatus(s)) !== 'exited') continue;
    throw await goneStepError(
      slurm,
      s,
      `server step ${s.stepName} on ${s.node} (rank ${s.rank}) gone during the point${why ? ` (${why})` : ''}`,
      { jobId: s.jobId, node: s.node, step },
    );
  }
}

/** The role of each metrics endpoint of a P/D plan (its workers' serving endpoints, prefill first: plan-disagg.ts). */
function metricsRolesOf(pd: NonNullable<SweepPlan['disaggregation']>): string[] {
  return pd.roles.flatMap((r) => r.endpoints.flat().map(() => r.role));
}
