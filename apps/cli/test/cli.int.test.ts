/**
 * The CLI against the real stack: Temporal dev server + Web UI, local Slurm over the loopback
 * sshd, the simulator launched per allocation. The sweeps of `a sweep followed from the CLI` and
 * `cancel and resume` run the production worker (createSweepWorker, cluster `local`) with the real
 * activities in this process, on a task queue of their own (testCluster); the CLI itself runs as
 * a subprocess. The invalid point is made invalid by the simulator's configuration, not by a fake.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { progressQuery, type SweepAllInput, type SweepInput } from '@infersweep/sweep';
import { allocationJobName, deploymentJobPrefix, deploymentTag, ResultsLayout, taskQueueFor } from '@infersweep/core';
import type { SweepPlan } from '@infersweep/topology';
import { currentDeploymentTag, startSweep, type StartedSweep } from '@infersweep/orchestrator';
import { readRequestRecords } from '@infersweep/agentx';
import { launchChromium } from '../src/ops/browser';
import { activePollers } from '../src/ops/temporal';
import { cli, scheduledRun, testCluster, type CliRun } from '@infersweep/testkit/cli';
import { until } from '@infersweep/testkit/wait';
import {
  cleanupStarted,
  client as temporalClient,
  liveJobsOf,
  localSlurm,
  noSubagents,
  notSaturationGated,
  profileSeconds,
  readPoint,
  runningWorker,
  target,
  testInput,
  testPlan,
  track,
} from '@infersweep/testkit/sweep-harness';
import { repoRoot, stackEnv } from '@infersweep/testkit/stack';

const artifacts = join(repoRoot, 'test-results', 'cli');
mkdirSync(artifacts, { recursive: true });
const slurm = localSlurm();
const slurmEnv = { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF };

let client: Client;
beforeAll(async () => {
  client = await temporalClient();
});
afterAll(async () => {
  await client?.connection.close();
});

const json = <T>(s: string): T => JSON.parse(s) as T;

/** The eight bytes every PNG file starts with. */
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A sweep input of `plan` on a cluster name (and so a task queue) of its own. */
const inputOn = (cluster: string, plan: SweepPlan, tag: string): SweepInput => testInput({ ...plan, cluster }, tag);

/**
 * The production worker of the `local` cluster profile, in this process, serving a test cluster
 * name too (its task queue isolates the test's sweeps): the worker's settings serve that name with
 * the `local` site profile (INFERSWEEP_WORKER_CLUSTERS `name=profile`, read when the worker is created).
 */
async function servingWorker(cluster: string): Promise<{ stop(): Promise<void> }> {
  const before = process.env.INFERSWEEP_WORKER_CLUSTERS;
  process.env.INFERSWEEP_WORKER_CLUSTERS = `local,${cluster}=local`;
  try {
    return await runningWorker(taskQueueFor(cluster));
  } finally {
    if (before === undefined) delete process.env.INFERSWEEP_WORKER_CLUSTERS;
    else process.env.INFERSWEEP_WORKER_CLUSTERS = before;
  }
}

/** A sweep started as the CLI starts one (search attributes, memo), released by cleanupStarted. */
async function startTracked(input: SweepInput): Promise<StartedSweep> {
  const started = await startSweep(client, target, input);
  track(started.handle, input.sweepId);
  return started;
}

/** The request records of a point (libs/agentx writes one JSON line per request). */
const requestsOf = (resultsDir: string, c: number) =>
  readRequestRecords(new ResultsLayout(resultsDir).pointRequests(c));

/** What squeue says of a job: its name, state and nodes (expanded by scontrol). */
function squeueJob(jobId: string): { name: string; state: string; nodes: string[] } {
  const [name = '', state = '', nodeList = ''] = execFileSync('squeue', ['-h', '-j', jobId, '-o', '%j|%T|%N'], {
    env: slurmEnv,
  })
    .toString()
    .trim()
    .split('|');
  const nodes = execFileSync('scontrol', ['show', 'hostnames', nodeList], { env: slurmEnv })
    .toString()
    .trim()
    .split('\n');
  return { name, state, nodes };
}

interface StatusJson {
  workflowStatus: string;
  phase: string;
  currentPoint?: number;
  uiLink: string;
  points: { concurrency: number; status: string; attempts: number }[];
  allocations: { jobId: string; jobName: string; nodes: string[] }[];
  live: { concurrency?: number; phase?: string; completed?: number }[];
}

const status = async (id: string): Promise<StatusJson> => {
  const r = await cli(['status', id, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return json<StatusJson>(r.stdout);
};

/** Poll `status --json` until point c runs on the server and its client has completed requests. */
const pointMeasuring = (id: string, c: number, timeoutMs = 180_000): Promise<StatusJson> =>
  until(
    `c=${c} running with completed requests`,
    async () => {
      const s = await status(id);
      return s.phase === 'running-point' &&
        s.currentPoint === c &&
        (s.live.find((l) => l.concurrency === c)?.completed ?? 0) > 0
        ? s
        : undefined;
    },
    timeoutMs,
    1000,
  );

// The simulator sized for 6 requests in flight: 4 running and 2 waiting, HTTP 429 "waiting requests
// queue is full" beyond. c=8's lanes start 8 root requests at once, and a refused root request in
// warm-up cancels the point (libs/agentx's client gates), as a failed-request rate above the
// threshold would in the profile. c=4's lanes fit: a rare refused subagent request in its profile
// stays far below that threshold.
const SIM_CAPACITY = { maxNumSeqs: 4, waiting: 2 };

describe('a sweep followed from the CLI (real worker, real activities)', () => {
  const cluster = testCluster();
  // c=4 profiles long enough (60 s) for status, list and skip, issued at once, to see it run on a loaded host
  // (40 s was too short with seven agents on the 2 cores: the four spawns outlasted the point)
  const plan = testPlan(
    'balanced',
    [4, 8, 16],
    (p) => {
      notSaturationGated(p);
      noSubagents(p); // the capacity below counts requests: c=4 fits, c=8 does not
      profileSeconds(60)(p);
    },
    (cfg) => {
      const sim = cfg.clusters.local!.engineOverride;
      if (sim?.kind !== 'simulator') throw new Error('the local cluster profile runs the simulator');
      sim.maxNumSeqs = SIM_CAPACITY.maxNumSeqs;
      sim.extraArgs = [...sim.extraArgs, '--max-waiting-queue-length', String(SIM_CAPACITY.waiting)];
    },
  );
  const input = inputOn(cluster, plan, 'cli-follow');
  let worker: { stop(): Promise<void> } | undefined;
  let started: StartedSweep;
  let reportPath = '';
  /** list and skip, started together with status while c=4 measures (each test below reads its own). */
  let views: { list: Promise<CliRun[]>; skip: Promise<CliRun[]> } | undefined;

  beforeAll(async () => {
    worker = await servingWorker(cluster);
    started = await startTracked(input);
  });
  afterAll(async () => {
    await cleanupStarted(slurm);
    await worker?.stop();
  });

  it('the plan launches the simulator with the capacity that rejects c=8', () => {
    const argv = plan.nodes[0]!.launchArgv.join(' ');
    expect(argv).toContain(`--max-num-seqs ${SIM_CAPACITY.maxNumSeqs}`);
    expect(argv).toContain(`--max-waiting-queue-length ${SIM_CAPACITY.waiting}`);
  });

  it('status --json prints the progress query: phase, points, the real allocation and live heartbeat details', async () => {
    const s = await pointMeasuring(started.workflowId, 4);
    // squeue at once, while c=4 certainly holds the job
    const a = s.allocations[0]!;
    const job = squeueJob(a.jobId);
    // the CLI views that need c=4 still running, spawned together (independent processes): the text
    // status, the skip of a pending and of the running point, the list of running sweeps…
    const text = cli(['status', started.workflowId]);
    const skipPending = cli(['skip', started.workflowId, '--point', '16', '--reason', 'not needed']);
    const skipRunning = cli(['skip', started.workflowId, '--point', '4']);
    const listRunning = cli(['list', '--running', '--cluster', cluster, '--orientation', 'balanced', '--json']);
    await Promise.all([text, skipPending, skipRunning, listRunning]);
    // …then the ones that do not depend on the point's state
    views = {
      list: Promise.all([
        listRunning,
        cli(['list', '--cluster', cluster, '--orientation', 'throughput', '--json']),
        cli(['list', '--limit', 'ten']),
      ]),
      skip: Promise.all([
        skipPending,
        skipRunning,
        cli(['skip', started.workflowId, '--point', 'x']),
        cli(['skip', started.workflowId]),
      ]),
    };
    expect(s.workflowStatus).toBe('RUNNING');
    expect(s.uiLink).toContain(`/workflows/${started.workflowId}`);
    expect(s.points.map((p) => [p.concurrency, p.status])).toEqual([
      [4, 'running'],
      [8, 'pending'],
      [16, 'pending'],
    ]);
    expect(s.points[0]!.attempts).toBe(1);
    // the allocation is the Slurm job squeue shows: its id, name and nodes
    expect(a.jobName).toBe(allocationJobName(started.workflowId, 1, currentDeploymentTag()));
    expect(job).toEqual({ name: a.jobName, state: 'RUNNING', nodes: a.nodes });
    expect(a.nodes).toHaveLength(plan.slurm.nodes);
    expect((await text).stdout).toMatch(/c=4\s+running\s+\S+\s+\d+ requests done/);
    expect((await text).stdout).toMatch(new RegExp(`job ${a.jobId}\\s+${a.nodes.join(',')}\\s+holding`));
  });

  it('list filters by search attributes', async () => {
    expect(views, 'started by the status test while c=4 measures').toBeDefined();
    const [hit, miss, bad] = (await views!.list) as [CliRun, CliRun, CliRun];
    expect(hit.code, hit.stderr).toBe(0);
    expect(json<{ workflowId: string }[]>(hit.stdout).map((r) => r.workflowId)).toEqual([started.workflowId]);
    expect(json<unknown[]>(miss.stdout)).toEqual([]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit "ten"');
  });

  it('skip: a pending point is skipped; a running one and a bad value are refused', async () => {
    expect(views, 'started by the status test while c=4 measures').toBeDefined();
    const [ok, running, bad, missing] = (await views!.skip) as [CliRun, CliRun, CliRun, CliRun];
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/c=16\s+skipped/);
    expect(running.code).toBe(1);
    expect(running.stderr).toContain('c=4 is running');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--point "x"');
    expect(missing.code).toBe(2);
  });

  it('watch follows to the end, exits 3 for the invalid point (with its reason) and writes the report', async () => {
    const r = await cli(['watch', started.workflowId], {}, 300_000);
    expect(r.code, r.stderr + r.stdout).toBe(3);
    const m = /report: (.+\.html)/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    reportPath = m![1]!;
    expect(existsSync(reportPath)).toBe(true);
    expect(r.stdout).toMatch(/balanced c=4 done/);
    expect(r.stdout).toMatch(/c=8\s+invalid/);
    expect(r.stdout).toMatch(
      /c=8 invalid · INVALID · run_cancelled: (root warmup request failed: rate_limit: Failed to enqueue request, waiting requests queue is full|failed-request threshold exceeded)/,
    );
    // the request records say why: the simulator refused c=8's requests
    // (sent inside the stream with code 429: classified rate_limit, libs/agentx/src/client/http.ts classifyStreamError)
    const refused = requestsOf(input.resultsDir, 8).filter(
      (q) => q.error === 'Failed to enqueue request, waiting requests queue is full',
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((q) => q.error_category))).toEqual(new Set(['rate_limit']));
    expect(readPoint(input.resultsDir, 4).submission_valid).toBe(true);
    expect(readPoint(input.resultsDir, 8).submission_valid).toBe(false);
  });

  it('results prints a table, CSV and JSON', async () => {
    const csv = await cli(['results', started.workflowId, '--csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.trimEnd().split('\r\n');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toContain(',4,done,true,');
    expect(lines[2]).toContain(',8,invalid,false,');
    expect(lines[2]).toContain('run_cancelled: ');
    const table = await cli(['results', started.workflowId]);
    expect(table.stdout).toMatch(/16\s+skipped/);
    const both = await cli(['results', started.workflowId, '--csv', '--json']);
    expect(both.code).toBe(2);
  });

  it('logs shows the captured simulator log of the head node, filtered by node', async () => {
    const p = await started.handle.query(progressQuery);
    const alloc = p.allocations[0]!;
    const head = alloc.nodes[0]!;
    const r = await cli(['logs', started.workflowId, '--node', head, '--lines', '100000']);
    expect(r.code, r.stderr).toBe(0);
    // llm-d-inference-sim's own lines: its HTTP server starting, and the 429s it answered c=8 with
    expect(r.stdout).toMatch(/"Server starting" protocol="HTTP"/);
    expect(r.stdout).toContain('waiting requests queue is full');
    const none = await cli(['logs', started.workflowId, '--node', 'node9']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no server logs');
  });

  it('report: one marker per valid point in the browser; PNG export; screenshot artifact', async () => {
    const chart = join(artifacts, 'chart.png');
    const shot = join(artifacts, 'report.png');
    for (const f of [chart, shot]) rmSync(f, { force: true }); // never a file an earlier run left
    const r = await cli(['report', started.workflowId, '--png', chart]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(chart).subarray(0, 8)).toEqual(PNG_SIGNATURE);
    const { browser, close } = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
      await page.goto(`file://${reportPath}`);
      const valid = await page.locator('tr.point.valid').count();
      expect(valid).toBe(1);
      expect(await page.locator('#chart-0 .marker').count()).toBe(valid);
      expect(await page.locator('tr.point').count()).toBe(3);
      await page.screenshot({ path: shot, fullPage: true });
    } finally {
      await close();
    }
    expect(readFileSync(shot).subarray(0, 8)).toEqual(PNG_SIGNATURE);
  });

  it('the Temporal Web UI lists the sweep by a custom search attribute and shows its progress query', async () => {
    const { browser, close } = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await page.goto(
        `${target.uiBase}/namespaces/default/workflows?query=${encodeURIComponent(`InfersweepCluster="${cluster}"`)}`,
      );
      await page.getByRole('link', { name: started.workflowId }).first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(artifacts, 'web-ui-list.png') });
      await page.goto(`${target.uiBase}/namespaces/default/workflows/${started.workflowId}/${started.runId}/query`);
      await page.getByRole('button', { name: 'Run Query' }).click({ timeout: 30_000 });
      await page.getByText(`"sweepId": "${started.workflowId}"`).first().waitFor({ timeout: 30_000 });
      await expect(page.getByText('"phase": "completed"').first().isVisible()).resolves.toBe(true);
      await page.screenshot({ path: join(artifacts, 'web-ui-progress-query.png'), fullPage: true });
    } finally {
      await close();
    }
  });
});

describe('cancel and resume (real worker, real activities)', () => {
  const cluster = testCluster();
  // 20 s profiles: c=4 is cancelled while it measures; after the resume both points run to the end
  const input = inputOn(
    cluster,
    testPlan('balanced', [4, 8], (p) => {
      notSaturationGated(p);
      profileSeconds(20)(p);
    }),
    'cli-resume',
  );
  let worker: { stop(): Promise<void> } | undefined;
  let started: StartedSweep;

  beforeAll(async () => {
    worker = await servingWorker(cluster);
    started = await startTracked(input);
  });
  afterAll(async () => {
    await cleanupStarted(slurm);
    await worker?.stop();
  });

  it('cancel stops a running sweep (cleanup releases its Slurm job); resume restarts it with the frozen input and it completes', async () => {
    const running = await pointMeasuring(started.workflowId, 4);
    const jobNames = running.allocations.map((a) => a.jobName);
    expect(squeueJob(running.allocations[0]!.jobId).state).toBe('RUNNING');
    const c = await cli(['cancel', started.workflowId]);
    expect(c.code, c.stderr).toBe(0);
    await until(
      'cancelled',
      async () => ((await started.handle.describe()).status.name === 'CANCELLED' ? true : undefined),
      120_000,
    );
    // the workflow's cleanup released the allocation before the sweep closed
    expect(await liveJobsOf(slurm, jobNames)).toEqual([]);
    const again = await cli(['cancel', started.workflowId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already CANCELLED');

    const r = await cli(['resume', started.workflowId], {}, 300_000);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('started again with the same plan');
    expect(r.stdout).toContain('report: ');
    const st = await status(started.workflowId);
    expect(st.workflowStatus).toBe('COMPLETED');
    expect(st.points.map((p) => [p.concurrency, p.status])).toEqual([
      [4, 'done'],
      [8, 'done'],
    ]);
    // the resumed run allocated anew and released that job too
    expect(st.allocations.map((a) => a.jobId)).not.toContain(running.allocations[0]!.jobId);
    expect(
      await liveJobsOf(
        slurm,
        st.allocations.map((a) => a.jobName),
      ),
    ).toEqual([]);
    const nothing = await cli(['resume', started.workflowId]);
    expect(nothing.stdout).toContain('nothing to resume');
  });

  it('unknown ids are failures that say how to find sweeps', async () => {
    const r = await cli(['status', 'sweep-does-not-exist-zz']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('infersweep list');
  });
});

describe('sweep command', () => {
  it('an invalid orientation or point list is a usage error and starts nothing', async () => {
    const r = await cli(['sweep', '--orientation', 'nope', '--detach']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no orientation "nope"');
    const p = await cli(['sweep', '--orientation', 'balanced', '--points', '4,x', '--detach']);
    expect(p.code).toBe(2);
    expect(p.stderr).toContain('--points "4,x"');
    const l = await cli(['sweep', '--orientation', 'balanced', '--label', 'a b']);
    expect(l.code).toBe(2);
  });

  it('--detach --json prints one object with the sweep id and Web UI link; a second start is refused', async () => {
    const label = `clitest-${randomUUID().slice(0, 8)}`;
    const r = await cli([
      'sweep',
      '--orientation',
      'balanced',
      '--points',
      '4',
      '--label',
      label,
      '--detach',
      '--json',
    ]);
    const cleanup = async (id: string) => {
      const h = client.workflow.getHandle(id);
      // with no worker polling nothing ran: terminate; otherwise cancel so cleanup releases Slurm
      if ((await activePollers(client, target.namespace, 'local')) === 0)
        await h.terminate('test cleanup').catch(() => undefined);
      else await h.cancel().catch(() => undefined);
    };
    expect(r.code, r.stderr).toBe(0);
    const o = json<{ sweepId: string; uiLink: string; orientations: { resultsDir: string }[] }>(r.stdout.trim());
    try {
      expect(o.sweepId).toMatch(new RegExp(`^sweep-.+-balanced-local-${label}$`));
      expect(o.sweepId).toContain(label);
      expect(o.uiLink).toContain(`${target.uiBase}/namespaces/default/workflows/${o.sweepId}`);
      expect(r.stdout.trim().split('\n')).toHaveLength(1);
      const dup = await cli(['sweep', '--orientation', 'balanced', '--points', '4', '--label', label, '--detach']);
      expect(dup.code).toBe(1);
      expect(dup.stderr).toContain('already running');
    } finally {
      await cleanup(o.sweepId);
    }
  });
});

describe('schedule', () => {
  it('create (frozen plan, SKIP, catchup window, pause on failure), describe, pause/unpause, trigger, delete', async () => {
    const name = `clitest-${randomUUID().slice(0, 8)}`;
    const queue = `infersweep-${testCluster()}`; // nobody polls it: a triggered run starts and waits
    const c = await cli([
      'schedule',
      'create',
      name,
      '--cron',
      '0 2 * * *',
      '--orientation',
      'all',
      '--task-queue',
      queue,
      '--catchup-window',
      '30 minutes',
    ]);
    try {
      expect(c.code, c.stderr).toBe(0);
      expect(c.stdout).toContain('plan is frozen');
      const d = json<{
        paused: boolean;
        workflowType: string;
        taskQueue: string;
        policies: { overlap: string; catchupWindow: number; pauseOnFailure: boolean };
        orientations: { orientation: string }[];
        nextActionTimes: string[];
      }>((await cli(['schedule', 'describe', name, '--json'])).stdout);
      expect(d.workflowType).toBe('sweepAllWorkflow');
      expect(d.taskQueue).toBe(queue);
      expect(d.policies).toEqual({ overlap: 'SKIP', catchupWindow: 30 * 60 * 1000, pauseOnFailure: true });
      // every orientation of the shipped config, in config order: the bash runner's three, InferenceX's two, then
      // the P/D one (the local profile launches it behind llm-d's pd-sidecar: apps/cli/src/ops/plans.ts)
      expect(d.orientations.map((o) => o.orientation)).toEqual([
        'latency',
        'balanced',
        'throughput',
        'ix-latency',
        'ix-balanced',
        'pd-1p1d',
      ]);
      expect(d.nextActionTimes[0]).toMatch(/T02:00:00/);
      expect((await cli(['schedule', 'pause', name])).code).toBe(0);
      expect(json<{ paused: boolean }>((await cli(['schedule', 'describe', name, '--json'])).stdout).paused).toBe(true);
      expect((await cli(['schedule', 'unpause', name])).code).toBe(0);
      const list = await cli(['schedule', 'list', '--json']);
      expect(
        json<{ scheduleId: string; paused: boolean }[]>(list.stdout).find((x) => x.scheduleId === `infersweep-${name}`)
          ?.paused,
      ).toBe(false);

      expect((await cli(['schedule', 'trigger', name])).code).toBe(0);
      const run = await scheduledRun(client, name);
      const h = client.workflow.getHandle(run.workflowId);
      const history = await h.fetchHistory();
      const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      const input = client.options.loadedDataConverter.payloadConverter.fromPayload<SweepAllInput>(payload);
      expect(input.perRun?.resultsRoot).toMatch(/results$/);
      expect(input.sweeps).toHaveLength(6);
      await h.terminate('ended by the test: resumed next');

      // resume keeps the run's identity: same workflow id, the schedule's task queue and per-run
      // results root, so its children get the same sweep ids and results folders again
      const resumed = await cli(['resume', run.workflowId, '--detach']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('started again with the same plan');
      const again = client.workflow.getHandle(run.workflowId);
      const d2 = await again.describe();
      expect(d2.status.name).toBe('RUNNING');
      expect(d2.runId).not.toBe(run.runId);
      expect(d2.taskQueue).toBe(queue);
      const p2 = (await again.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      const input2 = client.options.loadedDataConverter.payloadConverter.fromPayload<SweepAllInput>(p2);
      expect(input2.perRun).toEqual(input.perRun);
      expect(input2.sweeps.map((x) => x.sweepId)).toEqual(input.sweeps.map((x) => x.sweepId));
      await again.terminate('test cleanup');

      const dup = await cli([
        'schedule',
        'create',
        name,
        '--cron',
        '0 2 * * *',
        '--orientation',
        'all',
        '--task-queue',
        queue,
      ]);
      expect(dup.code).toBe(1);
      expect(dup.stderr).toContain('already exists');
    } finally {
      await cli(['schedule', 'delete', name]);
    }
    const gone = await cli(['schedule', 'describe', name]);
    expect(gone.code).toBe(1);
    const bad = await cli([
      'schedule',
      'create',
      `${name}-b`,
      '--cron',
      '0 99 * * *',
      '--orientation',
      'balanced',
      '--task-queue',
      queue,
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Hour is not in range');
  });
});

describe('janitor', () => {
  const env = { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF };
  /** A 10-minute batch job of this name (`extra`: e.g. `--array=1-2`); its job id. */
  const sbatch = (name: string, extra: string[] = []) =>
    execFileSync(
      'sbatch',
      [
        '--parsable',
        '-J',
        name,
        '-p',
        stackEnv().INFERSWEEP_PARTITION,
        '-N',
        '1',
        '-n',
        '1',
        ...extra,
        '--time',
        '10',
        '--output',
        '/dev/null',
        '--wrap',
        'sleep 600',
      ],
      { env },
    )
      .toString()
      .trim()
      .split(';')[0]!;
  const alive = (jobId: string) =>
    /RUNNING|PENDING|CONFIGURING/.test(execFileSync('squeue', ['-h', '-j', jobId, '-o', '%T'], { env }).toString());
  const tag = `zzjan${randomUUID().slice(0, 6)}`;
  const jobs: string[] = [];
  let idle: StartedSweep;

  afterAll(async () => {
    for (const j of jobs) execFileSync('scancel', [j], { env });
    await idle?.handle.terminate('test cleanup').catch(() => undefined);
  });

  it("lists jobs of closed or unknown sweeps as orphans, cancels only them with --apply, never a running sweep's", async () => {
    // a running sweep (nobody polls its queue, so it stays running) and a job carrying its allocation name
    const input = inputOn(`cj${tag.slice(-4)}`, testPlan('balanced', [4]), tag);
    const mine = currentDeploymentTag();
    expect(input.deploymentTag).toBe(mine);
    idle = await startSweep(client, target, input);
    const kept = sbatch(allocationJobName(idle.workflowId, 1, mine));
    const orphan = sbatch(`${deploymentJobPrefix(mine)}${tag}-nosuchsweep-deadbeef-a1`);
    // a second deployment sharing the login account (same namespace name, another id): its running
    // sweep is unknown to our Temporal, and must be left alone all the same
    const otherDeployment = sbatch(
      allocationJobName(`sweep-${tag}-their-running-sweep`, 1, deploymentTag('default', `other-${tag}`)),
    );
    // someone's job array whose name even starts like ours: never parsed as ours, never cancelled
    const array = sbatch(`${deploymentJobPrefix(mine)}${tag}-array`, ['--array=1-2']);
    jobs.push(kept, orphan, otherDeployment, array);
    await until(
      'the jobs live',
      async () => (alive(kept) && alive(orphan) && alive(otherDeployment) && alive(`${array}`) ? true : undefined),
      30_000,
    );

    const list = await cli(['janitor', '--name-contains', tag, '--json']);
    expect(list.code, list.stderr).toBe(0);
    const v = json<{ jobId: string; verdict: string; sweepId?: string; cancelled: boolean }[]>(list.stdout);
    expect(v.find((x) => x.jobId === kept)).toMatchObject({
      verdict: 'running-sweep',
      sweepId: idle.workflowId,
      cancelled: false,
    });
    expect(v.find((x) => x.jobId === orphan)).toMatchObject({ verdict: 'unknown-sweep', cancelled: false });
    expect(alive(orphan)).toBe(true);

    const apply = await cli(['janitor', '--name-contains', tag, '--apply']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(new RegExp(`job ${orphan}.*ORPHAN.*cancelled`));
    expect(apply.stdout).toMatch(new RegExp(`job ${kept}.*keep: sweep ${idle.workflowId} is running`));
    await until('orphan gone', async () => (!alive(orphan) ? true : undefined), 30_000);
    expect(alive(kept)).toBe(true);
    expect(alive(otherDeployment)).toBe(true);
    expect(alive(array)).toBe(true);
    expect(apply.stdout).not.toContain(`job ${otherDeployment}`);
    expect(apply.stdout).toMatch(/infersweep job\(s\) without this deployment's tag .*: left alone/);
    expect(apply.stderr).toMatch(new RegExp(`janitor: skipped ${array}_.*job-array or het-job`));

    // once the sweep is closed, its job is an orphan too
    await idle.handle.terminate('janitor test: sweep closed');
    const after = json<{ jobId: string; verdict: string }[]>(
      (await cli(['janitor', '--name-contains', tag, '--json'])).stdout,
    );
    expect(after.find((x) => x.jobId === kept)?.verdict).toBe('closed-sweep');
  });
});

describe('help and exit codes', () => {
  it('every command has --help with the exit codes; unknown options are usage errors (2)', async () => {
    const commands = [
      ['sweep'],
      ['status'],
      ['list'],
      ['watch'],
      ['resume'],
      ['skip'],
      ['cancel'],
      ['logs'],
      ['results'],
      ['report'],
      ['schedule'],
      ['schedule', 'create'],
      ['janitor'],
      ['stack'],
    ];
    // the spawns are independent: all at once (each is mostly tsx start-up)
    const [u, ...helps] = await Promise.all([
      cli(['status', '--bogus']),
      ...commands.map((cmd) => cli([...cmd, '--help'])),
    ]);
    expect(helps.map((r, i) => [commands[i]!.join(' '), r.code, r.stdout.includes('Exit codes:')])).toEqual(
      commands.map((cmd) => [cmd.join(' '), 0, true]),
    );
    expect(u!.code).toBe(2);
    expect(u!.stderr).toContain("unknown option '--bogus'");
  });

  it('stack status reports the local stack; a bad verb is a usage error', async () => {
    const r = await cli(['stack', 'status']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/temporal\s+127\.0\.0\.1:\d+\s+up/);
    const bad = await cli(['stack', 'sideways']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('up, down, status');
  });

  it('report without an id asks for one or --latest', async () => {
    const r = await cli(['report']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--latest');
  });
});
