/** The inference server on an allocation: image import, launch (one step per node), readiness, logs, stop. */
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import {
  InfersweepError,
  remoteRankLogFile,
  remoteRouterLogFile,
  remoteServerLogDir,
  routerStepName,
  serverStepName,
} from '@infersweep/core';
import { bindPlan, type SweepPlan } from '@infersweep/topology';
import { LOGIN_ENV, imageFileName, resolveSecrets } from '@infersweep/slurm';
import { checkEveryEndpoint, disaggReadinessTargets, readinessTargets } from '@infersweep/agentx';
import type { ActivityContext } from './context';
import { allocationSpeedMultiplier, scaleSimulatorLatencies } from './speed';
import { ServerLostError } from './errors';
import { progress } from './liveness';
import type { Deployment, ServerActivities, StepRef } from './types';
import { loadLocalImages, localImageArgv } from './local-images';

const squashDirOf = (plan: SweepPlan) => plan.slurm.squashDir ?? join(plan.sharedDir, 'squash');

/** Import the plan's container image into the shared squash directory (pyxis only), on the head node when given an allocation. */
const importImage =
  (ctx: ActivityContext): ServerActivities['importImage'] =>
  async (input) => {
    ctx.assertOwnSweep(input.sweepId);
    const { plan, slurm } = await ctx.open(input);
    if (input.allocation) await ctx.assertOwnJob(slurm, input.allocation.jobId);
    if (plan.slurm.containerRuntime !== 'pyxis')
      return { note: `container runtime ${plan.slurm.containerRuntime}: no image to import` };
    // an import reports nothing until it ends: its own budget is its watchdog bound (./liveness.ts)
    progress(
      { phase: 'importing-image', image: plan.image },
      { stallSeconds: Math.max(60, plan.budgets.imageImportSeconds) + 600 },
    );
    const r = await slurm.importImage({
      image: plan.image,
      squashDir: squashDirOf(plan),
      lockTimeoutSeconds: Math.max(60, plan.budgets.imageImportSeconds),
      // imageImport.on = head-node: on the allocation's head compute node under srun (InferenceX's way)
      ...(input.allocation
        ? {
            onNode: {
              jobId: input.allocation.jobId,
              node: input.allocation.headNode,
              env:
                plan.slurm.imageImport.enrootCachePath === undefined
                  ? {}
                  : { ENROOT_CACHE_PATH: plan.slurm.imageImport.enrootCachePath },
            },
          }
        : {}),
    });
    return { squashPath: r.squashPath, note: r.imported ? 'imported' : 'valid squash file reused' };
  };

/** How a server step runs: the plan's container, the listed env and only the login's paths and locale, never the whole environment. */
function stepOptions(plan: SweepPlan, secretEnv: Record<string, string>, stepName: string) {
  return {
    runtime: plan.slurm.containerRuntime,
    containerImage:
      plan.slurm.containerRuntime === 'pyxis' ? join(squashDirOf(plan), imageFileName(plan.image)) : undefined,
    containerMounts: plan.slurm.mounts,
    stepName,
    isolateEnv: true,
    loginEnv: LOGIN_ENV,
    ...(Object.keys(secretEnv).length > 0 ? { secretEnv } : {}),
  };
}

/** Launch the server: one Slurm step per node of the bound plan; a failed launch stops the steps already started. */
const launchServer =
  (ctx: ActivityContext): ServerActivities['launchServer'] =>
  async (input) => {
    ctx.assertOwnSweep(input.sweepId);
    ctx.assertResultsDir(input.resultsDir, 'resultsDir');
    const { plan, slurm } = await ctx.open(input);
    const { sweepId, allocation, serverIndex } = input;
    await ctx.assertOwnJob(slurm, allocation.jobId);
    progress({ phase: 'launching', jobId: allocation.jobId, serverIndex });
    const addresses = await slurm.nodeAddresses(allocation.nodes);
    const bound = bindPlan(plan, {
      jobId: allocation.jobId,
      nodes: allocation.nodes,
      headAddress: addresses[allocation.nodes[0]!]!,
      nodeAddresses: allocation.nodes.map((n) => addresses[n]!),
    });
    const logDir = remoteServerLogDir(plan.sharedDir, sweepId, serverIndex);
    const speed = plan.engine.allocationSpeed;
    const speedMultiplier = speed ? allocationSpeedMultiplier(speed, allocation.jobId) : undefined;
    // secrets: names in the plan, values resolved here on the worker, handed to srun over stdin
    const secretEnv = resolveSecrets(plan.secretEnv ?? [], plan.secretsFile);
    // the local stack's image catalog (./local-images.ts): the simulator's speed per image name
    const catalog = plan.engine.launch === 'simulator' ? loadLocalImages() : undefined;
    const steps: StepRef[] = [];
    /** One step of the server, remembered for the watch, the logs and the stop. */
    const start = async (
      node: string,
      rank: number,
      argv: string[],
      env: Record<string, string>,
      log: string,
      name: string,
    ) => {
      const h = await slurm.launchStep(allocation.jobId, node, argv, env, log, stepOptions(plan, secretEnv, name));
      steps.push({
        jobId: allocation.jobId,
        node,
        stepName: h.stepName,
        logFile: log,
        rank,
        launcherPid: h.launcherPid,
      });
    };
    try {
      for (const n of bound.nodes) {
        progress({ phase: 'launching', jobId: allocation.jobId, serverIndex, rank: n.rank, node: n.node });
        // the local image catalog first (an image's latencies, in ms), then the allocation's speed
        const own = catalog && n.serves ? localImageArgv(n.launchArgv, plan.image, sweepId, catalog) : n.launchArgv;
        const argv = speedMultiplier === undefined ? own : scaleSimulatorLatencies(own, speedMultiplier);
        const log = remoteRankLogFile(logDir, n.rank, n.node);
        await start(n.node, n.rank, argv, n.env, log, serverStepName(serverIndex, n.rank));
      }
      // a P/D router infersweep launches (llm-d-pd-sidecar): one more step, on its node, watched like the ranks
      const r = bound.router;
      if (r) {
        progress({ phase: 'launching', jobId: allocation.jobId, serverIndex, router: r.node });
        await start(r.node, r.rank, r.argv, r.env, remoteRouterLogFile(logDir, r.node), routerStepName(serverIndex));
      }
    } catch (err) {
      await slurm.stopSteps(steps).catch(() => undefined);
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
      ...(speedMultiplier === undefined ? {} : { speedMultiplier }),
      ...(bound.requestHeaders === undefined ? {} : { requestHeaders: bound.requestHeaders }),
    };
    return deployment;
  };

/** Poll every endpoint until the server is ready, within the startup budget, while watching the deployment's steps. */
const waitReady =
  (ctx: ActivityContext): ServerActivities['waitReady'] =>
  async (input) => {
    const { plan, slurm } = await ctx.open(input);
    const { deployment, startupBudgetSeconds } = input;
    await ctx.assertOwnDeployment(slurm, plan, deployment);
    const started = Date.now();
    const deadline = started + startupBudgetSeconds * 1000;
    const activity = Context.current();
    let last = 'not polled yet';
    let lost: InfersweepError | undefined;
    await slurm.assertAlive(deployment.jobId, 'readiness');
    const live = ctx.watchDeployment(slurm, deployment, 'readiness', (err) => (lost = err));
    try {
      for (let polls = 0; ; polls++) {
        if (lost) throw lost;
        // every endpoint with its own engines (hybrid/external LB: one per serving node), not endpoint 0 alone
        const targets =
          plan.disaggregation === undefined
            ? readinessTargets(deployment.endpoints, deployment.metricsEndpoints, plan.engineIds)
            : disaggReadinessTargets(
                deployment.endpoints,
                deployment.metricsEndpoints,
                plan.engineIds,
                deployment.requestHeaders,
              );
        const r = await checkEveryEndpoint(targets, plan.model.servedName);
        if (r.ready) return { seconds: (Date.now() - started) / 1000 };
        last = r.detail;
        progress({
          phase: 'waiting-ready',
          polls,
          detail: last,
          elapsedSeconds: Math.round((Date.now() - started) / 1000),
        });
        if (Date.now() > deadline) {
          const logs = await slurm.fetchLogs(deployment.steps, { tailLines: 40 }).catch(() => []);
          throw new ServerLostError(`server not ready after ${startupBudgetSeconds} s: ${last}`, {
            jobId: deployment.jobId,
            node: deployment.headNode,
            step: 'readiness',
            logTail: logs.map((l) => `--- ${l.node}\n${l.tail}`).join('\n'),
          });
        }
        // the SDK's sleep: a cancel rejects it with a CancelledFailure, which stays a cancellation
        await activity.sleep(ctx.deps.pollMs);
      }
    } finally {
      await live.stop();
    }
  };

/** Copy the server's logs to the results and return their tails. */
const captureLogs =
  (ctx: ActivityContext): ServerActivities['captureLogs'] =>
  async (input) => {
    const { deployment, destDir } = input;
    ctx.assertResultsDir(destDir, 'destDir');
    const { plan, slurm } = await ctx.open(input);
    await ctx.assertOwnDeployment(slurm, plan, deployment);
    progress(
      { phase: 'capturing-logs', jobId: deployment.jobId, files: deployment.steps.length },
      { stallSeconds: 300 * (deployment.steps.length + 1) }, // each copy is bounded at 300 s (libs/slurm copyLogs)
    );
    const copied = await slurm.copyLogs(deployment.steps, destDir);
    const tails = await slurm.fetchLogs(deployment.steps, { tailLines: 20 });
    return { files: copied.map((c) => c.path), tails: Object.fromEntries(tails.map((t) => [t.node, t.tail])) };
  };

/** Stop every step of the deployment, all at once. */
const stopServer =
  (ctx: ActivityContext): ServerActivities['stopServer'] =>
  async (input) => {
    const { plan, slurm } = await ctx.open(input);
    await ctx.assertOwnDeployment(slurm, plan, input.deployment);
    await slurm.stopSteps(input.deployment.steps);
  };

export function serverActivities(ctx: ActivityContext): ServerActivities {
  return {
    importImage: importImage(ctx),
    launchServer: launchServer(ctx),
    waitReady: waitReady(ctx),
    captureLogs: captureLogs(ctx),
    stopServer: stopServer(ctx),
  };
}
