/** Test harness for sweeps on the real stack: plans from the shipped config, workers, observation. */
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planSweep, type SweepConfig, type SweepPlan } from '@infersweep/topology';
import { LocalExecutor, SlurmCluster } from '@infersweep/slurm';
import { pointResultSchema, readRequestRecords, type PointResult } from '@infersweep/agentx';
import { progressQuery, type SweepAllInput, type SweepInput, type SweepProgress } from '@infersweep/sweep';
import { allocationJobName, ResultsLayout, SWEEP_ALL_WORKFLOW_TYPE } from '@infersweep/core';
import {
  buildSweepInput,
  bundlerOptions,
  connectClient,
  createSweepWorker,
  currentDeploymentTag,
  loadSweepConfig,
  loadWorkerSettings,
  openQuarantine,
  temporalTarget,
  workflowsPath,
  type ActivityDeps,
} from '@infersweep/orchestrator';
import { repoRoot, stackEnv } from './stack';
import { recordHistory } from './history-fixtures';

export const target = temporalTarget();

// keep test output readable: the SDK's INFO lines (worker state changes, activity failures the
// tests provoke on purpose) are noise here
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed in this process
}

export function localSlurm(): SlurmCluster {
  process.env.SLURM_CONF = stackEnv().SLURM_CONF;
  return new SlurmCluster(new LocalExecutor());
}

/**
 * Every node of the local partition (or only `node`) up and responding, else undefined (for `until`):
 * a node back in service shows `idle*` for a while. Asks the Slurm that SLURM_CONF names ({@link localSlurm}).
 */
export async function partitionUp(node?: string): Promise<true | undefined> {
  const r = await new LocalExecutor().run([
    'sinfo',
    '-h',
    '-N',
    '-p',
    'local',
    ...(node ? ['-n', node] : []),
    '-o',
    '%T',
  ]);
  const states = r.stdout.trim().split('\n');
  return r.code === 0 && states.every((st) => /^(idle|mixed|allocated)$/.test(st.trim())) ? true : undefined;
}

/**
 * A plan of the shipped config on the `local` cluster. `configure` edits the loaded config before
 * planning (what an operator would write in the YAML, e.g. simulator flags); `mutate` the plan after.
 */
export function testPlan(
  orientation: string,
  points: number[],
  mutate?: (p: SweepPlan) => void,
  configure?: (c: SweepConfig) => void,
): SweepPlan {
  const loaded = loadSweepConfig({ clusters: ['local'] });
  configure?.(loaded.config);
  const plan = planSweep(loaded.config, { orientation, cluster: 'local', points, source: loaded.source });
  mutate?.(plan);
  return plan;
}

/** The client-health limits {@link notSaturationGated} sets (a config file can carry them too). */
export const UNGATED_CLIENT_HEALTH = { maxEventLoopDelayP99Ms: 1000, maxCpuFraction: 1 } as const;

/** The client-health gate line of the shipped configs' local profiles (configs/*.yaml). */
const SHIPPED_CLIENT_GATE = 'clientHealth: { maxEventLoopDelayP99Ms: 25, maxCpuFraction: 0.85 }';

/**
 * A shipped config's text (from `file`) with its client-health gate relaxed to {@link UNGATED_CLIENT_HEALTH}: the
 * config-file form of {@link notSaturationGated}, for a test about a path rather than a measurement, whose plan is
 * made from a file. Throws, naming the file, when the gate line is not there.
 */
export function ungatedConfigText(text: string, file: string): string {
  if (!text.includes(SHIPPED_CLIENT_GATE))
    throw new Error(`${file} no longer has "${SHIPPED_CLIENT_GATE}": update this test`);
  return text.replace(SHIPPED_CLIENT_GATE, `clientHealth: ${JSON.stringify(UNGATED_CLIENT_HEALTH)}`);
}

/**
 * For tests that are not about client saturation: the shared 2-core test host's event-loop delay
 * would otherwise invalidate points (libs/agentx's client health gate).
 */
export const notSaturationGated = (p: SweepPlan): void => {
  p.agentx.clientHealth = { ...p.agentx.clientHealth, ...UNGATED_CLIENT_HEALTH };
};

/**
 * For tests whose server capacity is counted in requests (the simulator's max-num-seqs and queue): traces
 * without subagents, so a point's requests in flight equal its concurrency (a subagent runs beside its
 * parent's later turns, aiperf's rule: libs/agentx/README.md).
 */
export const noSubagents = (p: SweepPlan): void => {
  if (p.agentx.traces.kind === 'synthetic') p.agentx.traces = { ...p.agentx.traces, subagentProbability: 0 };
};

/** A profile of `seconds` per point, with the point budgets and the Slurm time limit grown to match. */
export const profileSeconds =
  (seconds: number) =>
  (p: SweepPlan): void => {
    const more = seconds - p.agentx.profileDurationSeconds;
    p.agentx.profileDurationSeconds = seconds;
    p.pointBudgets = p.pointBudgets.map((b) => ({ ...b, totalSeconds: b.totalSeconds + more }));
    p.slurm.timeLimitMinutes += Math.ceil((more * p.pointBudgets.length) / 60);
  };

/**
 * `--orientation all` of the shipped config on the local cluster, each orientation at the points
 * `pointsOf` gives it (which may lie outside the orientation's concurrency list: c=1 keeps a local
 * run of every topology short).
 */
export function allOrientationPlans(
  pointsOf: (orientation: string, index: number) => number[],
  mutate?: (p: SweepPlan) => void,
): SweepPlan[] {
  const loaded = loadSweepConfig({ clusters: ['local'] });
  // disaggregated orientations are planned but not launched (apps/cli/src/ops/plans.ts launchable)
  const launched = Object.entries(loaded.config.orientations).filter(([, o]) => o.disaggregated === undefined);
  return launched.map(([orientation, o], i) => {
    const points = pointsOf(orientation, i);
    o.concurrency = points;
    const plan = planSweep(loaded.config, { orientation, cluster: 'local', points, source: loaded.source });
    mutate?.(plan);
    return plan;
  });
}

/**
 * Production's heartbeat timeouts of the activities that wait on the cluster (the point, the
 * allocation: libs/orchestrator/src/workflows/activities.ts). A timing profile that guards liveness by timer runs
 * longer than the one it guards.
 */
export { HEARTBEAT_TIMEOUT_SECONDS } from '@infersweep/orchestrator';

/** How long an allocation used to wait in the queue before infersweep gave up (`salloc --immediate=300`). */
export const OLD_GRANT_WINDOW_SECONDS = 300;

/**
 * The production-like timing profile: what an H200 cluster does to a sweep, at local
 * scale, each wait longer than the limit it threatens.
 *  - drain gate: polls of `drainPollSeconds` (as on a real cluster), `drainIdlePolls` of them before
 *    the next point: the gate takes longer than the point's heartbeat timeout;
 *  - a request streams for minutes: the simulator's inter-token latency (`--inter-token-latency`,
 *    launched from the plan's rank-0 launchArgv, libs/topology/src/plan/plan.ts) makes the c=1
 *    lane's first profiled request (seed-fixed by configs/kimik3-fp4-h200.yaml's synthetic traces:
 *    163 output tokens, replayed as max_tokens with ignore_eos) stream for ~29 s, longer than the
 *    heartbeat timeout; warm-up requests (max_tokens 1) and readiness probes stay short. Prove it
 *    from the point's raw requests ({@link longestRequestMs});
 *  - the allocation waits in the queue behind a job holding every node ({@link holdEveryNode})
 *    for longer than the allocate activity's heartbeat timeout (per commit: timings.int.test.ts) and
 *    than the window the allocation used to give up at (`salloc --immediate=300`,
 *    {@link OLD_GRANT_WINDOW_SECONDS}; nightly: timings.nightly.test.ts); the job keeps its place
 *    for the plan's grant wait (`clusters.<c>.grantWaitMinutes`, hours).
 * Apply with {@link productionLike}; the point budgets and the time limit grow by what the slow
 * requests and the drain add, so the time guard still admits every point.
 */
export const productionTimings = {
  drainPollSeconds: 10,
  drainIdlePolls: 4,
  interTokenLatencyMs: 180,
  /** the longest a profiled request at the profile's latency may add to a point (4000-token cap would be more; seed 42's first requests are far shorter) */
  requestAllowanceSeconds: 120,
  drainDeadlineSeconds: 180,
} as const;

/** Drain seconds of the profile: the idle polls at the poll interval (the first poll is immediate). */
export const productionDrainSeconds = (productionTimings.drainIdlePolls - 1) * productionTimings.drainPollSeconds;

/** Mutate a plan to the production-like timing profile ({@link productionTimings}); client saturation is not gated. */
export function productionLike(p: SweepPlan): void {
  const t = productionTimings;
  notSaturationGated(p);
  // the point budget counts the drain deadline (libs/topology/src/plan/plan.ts): add what the profile adds
  const extraSeconds = t.requestAllowanceSeconds + t.drainDeadlineSeconds - p.agentx.drain.deadlineSeconds;
  p.agentx.drain = {
    ...p.agentx.drain,
    pollSeconds: t.drainPollSeconds,
    idlePolls: t.drainIdlePolls,
    deadlineSeconds: t.drainDeadlineSeconds,
  };
  const head = p.nodes.find((n) => n.rank === 0);
  const i = head?.launchArgv.indexOf('--inter-token-latency') ?? -1;
  if (!head || i < 0)
    throw new Error(`the plan does not launch the simulator on rank 0: ${JSON.stringify(head?.launchArgv)}`);
  head.launchArgv[i + 1] = `${t.interTokenLatencyMs}ms`;
  p.pointBudgets = p.pointBudgets.map((b) => ({ ...b, totalSeconds: b.totalSeconds + extraSeconds }));
  p.slurm.timeLimitMinutes += Math.ceil((p.points.length * extraSeconds) / 60);
}

/** The longest request of a point (end - start, ms) and how many requests it recorded, from its raw requests file. */
export function longestRequestMs(resultsDir: string, c: number): { ms: number; requests: number } {
  const rows = readRequestRecords(new ResultsLayout(resultsDir).pointRequests(c));
  return { ms: Math.max(0, ...rows.filter((r) => r.ok).map((r) => r.end_ms - r.start_ms)), requests: rows.length };
}

const blockers = new Set<string>();

/**
 * A job holding every node of the local cluster, so the next allocation waits in the queue with
 * Slurm's pending reason. The caller releases it once the wait has lasted long enough (measured by
 * the waiting allocation's own heartbeat, not a sleep); its time limit bounds a forgotten one.
 */
export async function holdEveryNode(slurm: SlurmCluster): Promise<{ jobId: string; release: () => Promise<void> }> {
  const a = await slurm.allocate({
    jobName: `infersweep-test-blocker-${randomUUID().slice(0, 8)}`,
    nodes: 4,
    gres: false,
    exclusive: true,
    timeLimitMinutes: 15,
    grantTimeoutSeconds: 120,
  });
  blockers.add(a.jobId);
  return {
    jobId: a.jobId,
    release: async () => {
      await slurm.release(a.jobId);
      blockers.delete(a.jobId);
    },
  };
}

/**
 * A sweep input of `plan` with a results root of its own: the default history store is the results
 * root (libs/history record.ts `storeLocation`), so a root shared by the sweeps of one stack would
 * judge each test's sweep against other tests' sweeps and start confirmation A/Bs nobody asked
 * for. A test about history names its store itself (`INFERSWEEP_HISTORY_SETTINGS` or `perRun`).
 */
export function testInput(plan: SweepPlan, tag: string): SweepInput {
  const label = `${tag}-${randomUUID().slice(0, 8)}`;
  return buildSweepInput(plan, {
    configName: 'kimik3-test',
    configHash: 'test',
    label,
    resultsRoot: join(stackEnv().INFERSWEEP_STACK, '..', 'test-results', 'sweeps', label),
    operatorTimeout: '10 minutes',
  });
}

export async function client(): Promise<Client> {
  return connectClient(target);
}

/**
 * The run's one workflow bundle (test/global-setup.ts builds it from the checked-out sources and
 * names it in INFERSWEEP_WORKFLOW_BUNDLE); without it (a file run outside the integration project)
 * each worker bundles from source.
 */
export function workflowBundle(): { codePath: string } | undefined {
  const codePath = process.env.INFERSWEEP_WORKFLOW_BUNDLE;
  return codePath ? { codePath } : undefined;
}

/** The production worker of `cluster` (its settings allow that cluster's sweeps) on `taskQueue`; `deps` as a deployment may set them. */
export async function newWorker(taskQueue: string, cluster = 'local', deps?: Partial<ActivityDeps>): Promise<Worker> {
  const { worker } = await createSweepWorker({ cluster, target, taskQueue, workflowBundle: workflowBundle(), deps });
  return worker;
}

/** The production worker of the `local` cluster on `taskQueue`, running in this process until `stop`. */
export async function runningWorker(taskQueue: string): Promise<{ stop(): Promise<void> }> {
  const { worker, connection } = await createSweepWorker({
    cluster: 'local',
    target,
    taskQueue,
    workflowBundle: workflowBundle(),
  });
  const running = worker.run();
  return {
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    },
  };
}

const started: { handle: WorkflowHandle; sweepIds: string[] }[] = [];

/** A sweep started another way (e.g. the CLI's startSweep), released by cleanupStarted like the others. */
export function track(handle: WorkflowHandle, ...sweepIds: string[]): void {
  started.push({ handle, sweepIds });
}

/** Start the sweep workflow on a test task queue (same workflow and activities as production). */
export async function start(c: Client, input: SweepInput, taskQueue: string): Promise<WorkflowHandle> {
  const handle = await c.workflow.start('sweepWorkflow', {
    taskQueue,
    workflowId: input.sweepId,
    args: [input],
    workflowIdConflictPolicy: 'FAIL',
  });
  track(handle, input.sweepId);
  return handle;
}

/**
 * Deps of a worker of `cluster` whose settings also allow `binaries` on the nodes (a test's own wrapper
 * of the engine), as an operator lists them in nodeBinaries.
 */
export function allowingNodeBinaries(cluster: string, ...binaries: string[]): Partial<ActivityDeps> {
  const settings = loadWorkerSettings(cluster);
  return { settings: { ...settings, nodeBinaries: [...settings.nodeBinaries, ...binaries] } };
}

/** A new worker on a fresh test task queue, and the sweep started on it (run it with `worker.runUntil`). */
export async function startOnNewWorker(
  c: Client,
  input: SweepInput,
  deps?: Partial<ActivityDeps>,
): Promise<{ worker: Worker; h: WorkflowHandle }> {
  const tq = `t-${randomUUID()}`;
  const worker = await newWorker(tq, input.plan.cluster, deps);
  return { worker, h: await start(c, input, tq) };
}

/** Start `--orientation all` (sweepAllWorkflow, as startSweepAll in libs/orchestrator/src/client.ts does) on a test task queue. */
export async function startAll(c: Client, inputs: SweepInput[], taskQueue: string): Promise<WorkflowHandle> {
  const arg: SweepAllInput = { sweeps: inputs, maxConcurrentSweeps: 1 };
  const handle = await c.workflow.start(SWEEP_ALL_WORKFLOW_TYPE, {
    taskQueue,
    workflowId: `sweep-all-${inputs[0]!.label}`,
    args: [arg],
    workflowIdConflictPolicy: 'FAIL',
  });
  track(handle, ...inputs.map((i) => i.sweepId));
  return handle;
}

/**
 * After a failed test: a sweep left running without its worker would hold its allocation until the
 * time limit. Terminate it and release every job it could have created (names are derived).
 */
export async function cleanupStarted(slurm: SlurmCluster): Promise<void> {
  for (const id of blockers) await slurm.release(id).catch(() => undefined);
  blockers.clear();
  for (const { handle, sweepIds } of started.splice(0)) {
    const d = await handle.describe().catch(() => undefined);
    if (d?.status.name === 'RUNNING') await handle.terminate('test cleanup').catch(() => undefined);
    for (const sweepId of sweepIds)
      for (let attempt = 1; attempt <= 10; attempt++) {
        for (const j of await slurm.jobsNamed(allocationJobName(sweepId, attempt, currentDeploymentTag())))
          await slurm.release(j.jobId);
      }
  }
}

const ENDED_PHASES: readonly SweepProgress['phase'][] = ['completed', 'failed', 'cancelled', 'aborted'];
/** How long an ended sweep must stay ended before waitProgress gives up on it (a reset starts a new run). */
const ENDED_GRACE_MS = 10_000;

/**
 * Poll the progress query until `pred` holds (no fixed sleeps). A sweep that has ended without `pred`
 * holding (for ENDED_GRACE_MS) fails the wait at once, naming its phase, instead of at the timeout.
 */
export async function waitProgress(
  h: WorkflowHandle,
  pred: (p: SweepProgress) => boolean,
  timeoutMs: number,
  what: string,
): Promise<SweepProgress> {
  const deadline = Date.now() + timeoutMs;
  let last: SweepProgress | undefined;
  let endedSince: number | undefined;
  for (;;) {
    try {
      last = await h.query(progressQuery);
      if (pred(last)) return last;
      endedSince = ENDED_PHASES.includes(last.phase) ? (endedSince ?? Date.now()) : undefined;
    } catch {
      // the first workflow task may not have run yet
    }
    const ended = endedSince !== undefined && Date.now() - endedSince > ENDED_GRACE_MS;
    if (ended || Date.now() > deadline)
      throw new Error(
        `${ended ? 'the sweep ended' : 'timed out'} waiting for ${what}; last progress: ${JSON.stringify(last?.points ?? null)} phase=${last?.phase}`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Poll the running activity's last heartbeat until `pred` holds (e.g. the point is profiling). */
export async function waitHeartbeat(
  h: WorkflowHandle,
  pred: (details: Record<string, unknown>) => boolean,
  timeoutMs: number,
  what: string,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    // a child workflow may not have started yet
    const d = await h.describe().catch(() => undefined);
    for (const a of d?.raw.pendingActivities ?? []) {
      const payload = a.heartbeatDetails?.payloads?.[0];
      if (!payload) continue;
      last = defaultPayloadConverter.fromPayload(payload);
      if (last && typeof last === 'object' && pred(last as Record<string, unknown>))
        return last as Record<string, unknown>;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last heartbeat ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export function pointRunning(c: number) {
  return (p: SweepProgress) => p.phase === 'running-point' && p.currentPoint === c;
}

export function readPoint(resultsDir: string, c: number): PointResult {
  return pointResultSchema.parse(JSON.parse(readFileSync(new ResultsLayout(resultsDir).pointRecord(c), 'utf8')));
}

/** No live job of this sweep is left in squeue. */
export async function liveJobsOf(slurm: SlurmCluster, sweepJobNames: string[]): Promise<string[]> {
  const rows = (await Promise.all(sweepJobNames.map((n) => slurm.jobsNamed(n)))).flat();
  return rows
    .filter((r) => ['RUNNING', 'PENDING', 'COMPLETING', 'CONFIGURING'].includes(r.state))
    .map((r) => `${r.jobId}:${r.state}`);
}

/** Asserts that no job of the sweep's allocations is left in squeue. */
export async function expectNoLeak(slurm: SlurmCluster, p: Pick<SweepProgress, 'allocations'>): Promise<void> {
  expect(
    await liveJobsOf(
      slurm,
      p.allocations.map((a) => a.jobName),
    ),
  ).toEqual([]);
}

/** Replay a finished sweep's history now; with INFERSWEEP_RECORD_HISTORIES=1 keep it as a fixture (./history-fixtures.ts). */
export async function keepHistory(h: WorkflowHandle, name: string): Promise<void> {
  const history = await recordHistory(h, name);
  // replay the fresh history right away with the current workflow code (the run's bundle when there is one)
  const bundle = workflowBundle();
  await Worker.runReplayHistory(
    bundle ? { workflowBundle: bundle } : { workflowsPath, bundlerOptions },
    history,
    h.workflowId,
  );
}

/** The production worker (apps/worker/src/main.ts) with `args`, as a child process in its own process group. */
export function spawnWorkerProcess(args: string[], options: Pick<SpawnOptions, 'env' | 'stdio'> = {}): ChildProcess {
  return spawn(join(repoRoot, 'node_modules', '.bin', 'tsx'), [join(repoRoot, 'apps/worker/src/main.ts'), ...args], {
    cwd: repoRoot,
    stdio: 'ignore',
    ...options,
    detached: true, // its own process group: tsx's node child gets the signal too
  });
}

/** The production worker of the `local` cluster on `taskQueue`, as a child process in its own process group. */
export function spawnWorker(taskQueue: string): ChildProcess {
  return spawnWorkerProcess(['--cluster', 'local', '--task-queue', taskQueue]);
}

/** Signal a spawned worker's whole process group. */
export function signalGroup(p: ChildProcess, sig: NodeJS.Signals): void {
  try {
    process.kill(-p.pid!, sig);
  } catch {
    // already gone
  }
}

/** Resolves with the exit code once the process has exited. */
export function exited(p: ChildProcess): Promise<number | null> {
  return new Promise((r) =>
    p.exitCode !== null || p.signalCode !== null ? r(p.exitCode) : p.once('exit', (code) => r(code)),
  );
}

/** The usual per-file set-up of a real-stack sweep test: a client, and cleanup after each test. */
export function realStackSuite(slurm: SlurmCluster): { client: () => Client } {
  let c: Client | undefined;
  beforeAll(async () => {
    c = await client();
  });
  afterEach(async () => {
    await cleanupStarted(slurm);
    // a test that downs a node leaves it quarantined in this slot's worker data (docs/failures.md): clear it
    const q = openQuarantine('local');
    await q.clear('all').finally(() => q.close());
  });
  afterAll(async () => {
    await c?.connection.close();
  });
  return { client: () => c! };
}

/** The history as proto JSON plus every payload's data decoded (base64 → text): what to search for a leak. */
export function historyText(json: string): string {
  const decoded: string[] = [];
  for (const m of json.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g))
    decoded.push(Buffer.from(m[1]!, 'base64').toString('utf8'));
  return `${json}\n${decoded.join('\n')}`;
}
