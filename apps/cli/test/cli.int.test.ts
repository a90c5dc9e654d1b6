/**
 * The CLI against the real stack: Temporal dev server + Web UI, Slurm. Sweeps run the real
 * workflow on a private task queue whose (in-process) worker has fake activities, so these tests
 * do not need the simulator or a free cluster; the CLI itself runs as a subprocess.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { allocationJobName, type SweepAllInput } from '@infersweep/sweep';
import { startSweep, type StartedSweep } from '@infersweep/worker';
import { launchChromium } from '../src/ops/browser';
import { activePollers } from '../src/ops/temporal';
import { cli, fakeInput, Gates, resultsRoot, startFakeWorker, target, temporalClient, testCluster, until } from './cli-harness';
import { repoRoot, stackEnv } from '../../../test/stack-env';

const artifacts = join(repoRoot, 'test-results', 'cli');
mkdirSync(artifacts, { recursive: true });

let client: Client;
beforeAll(async () => {
  client = await temporalClient();
});
afterAll(async () => {
  await client?.connection.close();
});

const json = <T>(s: string): T => JSON.parse(s) as T;

describe('a sweep followed from the CLI (real workflow, fake activities)', () => {
  const cluster = testCluster();
  const gates = new Gates();
  let worker: { stop(): Promise<void> };
  let started: StartedSweep;
  let reportPath = '';

  beforeAll(async () => {
    worker = await startFakeWorker(cluster, { hold: [4], invalid: [8] }, gates);
    started = await startSweep(client, target, fakeInput(cluster, [4, 8, 16], resultsRoot()));
  });
  afterAll(async () => {
    gates.open(4);
    await started?.handle.terminate('test cleanup').catch(() => undefined);
    await worker?.stop();
  });

  it('status --json prints the progress query: phase, points, allocations and live heartbeat details', async () => {
    const st = await until('c=4 running with a heartbeat', async () => {
      const r = await cli(['status', started.workflowId, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const s = json<{ phase: string; currentPoint?: number; live: { concurrency?: number; completed?: number }[] }>(r.stdout);
      return s.phase === 'running-point' && s.currentPoint === 4 && (s.live.find((l) => l.concurrency === 4)?.completed ?? 0) > 0 ? s : undefined;
    });
    const s = st as unknown as { workflowStatus: string; uiLink: string; points: { concurrency: number; status: string; attempts: number }[]; allocations: { jobId: string; nodes: string[] }[] };
    expect(s.workflowStatus).toBe('RUNNING');
    expect(s.uiLink).toContain(`/workflows/${started.workflowId}`);
    expect(s.points.map((p) => [p.concurrency, p.status])).toEqual([[4, 'running'], [8, 'pending'], [16, 'pending']]);
    expect(s.points[0]!.attempts).toBe(1);
    expect(s.allocations[0]).toMatchObject({ jobId: '901', nodes: ['node1', 'node2'] });
    const text = await cli(['status', started.workflowId]);
    expect(text.stdout).toMatch(/c=4\s+running\s+profiling\s+\d+ requests done/);
  });

  it('list filters by search attributes', async () => {
    const hit = await cli(['list', '--running', '--cluster', cluster, '--orientation', 'balanced', '--json']);
    expect(hit.code, hit.stderr).toBe(0);
    expect(json<{ workflowId: string }[]>(hit.stdout).map((r) => r.workflowId)).toEqual([started.workflowId]);
    const miss = await cli(['list', '--cluster', cluster, '--orientation', 'throughput', '--json']);
    expect(json<unknown[]>(miss.stdout)).toEqual([]);
    const bad = await cli(['list', '--limit', 'ten']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit "ten"');
  });

  it('skip: a pending point is skipped; a running one and a bad value are refused', async () => {
    const ok = await cli(['skip', started.workflowId, '--point', '16', '--reason', 'not needed']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/c=16\s+skipped/);
    const running = await cli(['skip', started.workflowId, '--point', '4']);
    expect(running.code).toBe(1);
    expect(running.stderr).toContain('c=4 is running');
    const bad = await cli(['skip', started.workflowId, '--point', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--point "x"');
    const missing = await cli(['skip', started.workflowId]);
    expect(missing.code).toBe(2);
  });

  it('watch follows to the end, exits 3 for an invalid point and writes the report', async () => {
    gates.open(4);
    const r = await cli(['watch', started.workflowId]);
    expect(r.code, r.stderr + r.stdout).toBe(3);
    expect(r.stdout).toMatch(/balanced c=4 done/);
    expect(r.stdout).toMatch(/c=8\s+invalid/);
    const m = /report: (.+\.html)/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    reportPath = m![1]!;
    expect(existsSync(reportPath)).toBe(true);
  });

  it('results prints a table, CSV and JSON', async () => {
    const csv = await cli(['results', started.workflowId, '--csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.trimEnd().split('\r\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toContain(',8,invalid,false,');
    const table = await cli(['results', started.workflowId]);
    expect(table.stdout).toMatch(/16\s+skipped/);
    const both = await cli(['results', started.workflowId, '--csv', '--json']);
    expect(both.code).toBe(2);
  });

  it('logs shows the captured server logs, filtered by node', async () => {
    const r = await cli(['logs', started.workflowId, '--node', 'node1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('fake server log');
    const none = await cli(['logs', started.workflowId, '--node', 'node9']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no server logs');
  });

  it('report: one marker per valid point in the browser; PNG export; screenshot artifact', async () => {
    const r = await cli(['report', started.workflowId, '--png', join(artifacts, 'chart.png')]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(artifacts, 'chart.png'))).toBe(true);
    const { browser, close } = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
      await page.goto(`file://${reportPath}`);
      const valid = await page.locator('tr.point.valid').count();
      expect(valid).toBe(1);
      expect(await page.locator('#chart-0 .marker').count()).toBe(valid);
      expect(await page.locator('tr.point').count()).toBe(3);
      await page.screenshot({ path: join(artifacts, 'report.png'), fullPage: true });
    } finally {
      await close();
    }
    expect(existsSync(join(artifacts, 'report.png'))).toBe(true);
  });

  it('the Temporal Web UI lists the sweep by a custom search attribute and shows its progress query', async () => {
    const { browser, close } = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await page.goto(`${target.uiBase}/namespaces/default/workflows?query=${encodeURIComponent(`InfersweepCluster="${cluster}"`)}`);
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

describe('cancel and resume', () => {
  const cluster = testCluster();
  const gates = new Gates();
  let worker: { stop(): Promise<void> };
  let started: StartedSweep;

  beforeAll(async () => {
    worker = await startFakeWorker(cluster, { hold: [4] }, gates);
    started = await startSweep(client, target, fakeInput(cluster, [4, 8], resultsRoot()));
  });
  afterAll(async () => {
    gates.open(4);
    await started?.handle.terminate('test cleanup').catch(() => undefined);
    await worker?.stop();
  });

  it('cancel stops a running sweep (cleanup runs); resume restarts it with the frozen input and it completes', async () => {
    await until('c=4 running', async () => ((await cli(['status', started.workflowId, '--json'])).stdout.includes('"currentPoint": 4') ? true : undefined));
    const c = await cli(['cancel', started.workflowId]);
    expect(c.code, c.stderr).toBe(0);
    await until('cancelled', async () => ((await started.handle.describe()).status.name === 'CANCELLED' ? true : undefined));
    const again = await cli(['cancel', started.workflowId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already CANCELLED');

    gates.open(4);
    const r = await cli(['resume', started.workflowId]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('started again with the same plan');
    expect(r.stdout).toContain('report: ');
    const st = json<{ workflowStatus: string; phase: string; points: { status: string }[] }>((await cli(['status', started.workflowId, '--json'])).stdout);
    expect(st.workflowStatus).toBe('COMPLETED');
    expect(st.points.map((p) => p.status)).toEqual(['done', 'done']);
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
    const r = await cli(['sweep', '--orientation', 'balanced', '--points', '4', '--label', label, '--detach', '--json']);
    const cleanup = async (id: string) => {
      const h = client.workflow.getHandle(id);
      // with no worker polling nothing ran: terminate; otherwise cancel so cleanup releases Slurm
      if ((await activePollers(client, target.namespace, 'local')) === 0) await h.terminate('test cleanup').catch(() => undefined);
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
    const c = await cli(['schedule', 'create', name, '--cron', '0 2 * * *', '--orientation', 'all', '--task-queue', queue, '--catchup-window', '30 minutes']);
    try {
      expect(c.code, c.stderr).toBe(0);
      expect(c.stdout).toContain('plan is frozen');
      const d = json<{ paused: boolean; workflowType: string; taskQueue: string; policies: { overlap: string; catchupWindow: number; pauseOnFailure: boolean }; orientations: { orientation: string }[]; nextActionTimes: string[] }>(
        (await cli(['schedule', 'describe', name, '--json'])).stdout,
      );
      expect(d.workflowType).toBe('sweepAllWorkflow');
      expect(d.taskQueue).toBe(queue);
      expect(d.policies).toEqual({ overlap: 'SKIP', catchupWindow: 30 * 60 * 1000, pauseOnFailure: true });
      expect(d.orientations.map((o) => o.orientation)).toEqual(['latency', 'balanced', 'throughput']);
      expect(d.nextActionTimes[0]).toMatch(/T02:00:00/);
      expect((await cli(['schedule', 'pause', name])).code).toBe(0);
      expect(json<{ paused: boolean }>((await cli(['schedule', 'describe', name, '--json'])).stdout).paused).toBe(true);
      expect((await cli(['schedule', 'unpause', name])).code).toBe(0);
      const list = await cli(['schedule', 'list', '--json']);
      expect(json<{ scheduleId: string; paused: boolean }[]>(list.stdout).find((x) => x.scheduleId === `infersweep-${name}`)?.paused).toBe(false);

      expect((await cli(['schedule', 'trigger', name])).code).toBe(0);
      const run = await until('the triggered run', async () => {
        for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH 'infersweep-sched-${name}'` })) return w;
        return undefined;
      });
      const h = client.workflow.getHandle(run.workflowId);
      const history = await h.fetchHistory();
      const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      const input = client.options.loadedDataConverter.payloadConverter.fromPayload<SweepAllInput>(payload);
      expect(input.perRun?.resultsRoot).toMatch(/results$/);
      expect(input.sweeps).toHaveLength(3);
      await h.terminate('test cleanup');

      const dup = await cli(['schedule', 'create', name, '--cron', '0 2 * * *', '--orientation', 'all', '--task-queue', queue]);
      expect(dup.code).toBe(1);
      expect(dup.stderr).toContain('already exists');
    } finally {
      await cli(['schedule', 'delete', name]);
    }
    const gone = await cli(['schedule', 'describe', name]);
    expect(gone.code).toBe(1);
    const bad = await cli(['schedule', 'create', `${name}-b`, '--cron', '0 99 * * *', '--orientation', 'balanced', '--task-queue', queue]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Hour is not in range');
  });
});

describe('janitor', () => {
  const env = { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF };
  const sbatch = (name: string) =>
    execFileSync('sbatch', ['--parsable', '-J', name, '-p', stackEnv().INFERSWEEP_PARTITION, '-N', '1', '-n', '1', '--time', '10', '--output', '/dev/null', '--wrap', 'sleep 600'], { env }).toString().trim().split(';')[0]!;
  const alive = (jobId: string) => /RUNNING|PENDING|CONFIGURING/.test(execFileSync('squeue', ['-h', '-j', jobId, '-o', '%T'], { env }).toString());
  const tag = `zzjan${randomUUID().slice(0, 6)}`;
  const jobs: string[] = [];
  let idle: StartedSweep;

  afterAll(async () => {
    for (const j of jobs) execFileSync('scancel', [j], { env });
    await idle?.handle.terminate('test cleanup').catch(() => undefined);
  });

  it('lists jobs of closed or unknown sweeps as orphans, cancels only them with --apply, never a running sweep\'s', async () => {
    // a running sweep (nobody polls its queue, so it stays running) and a job carrying its allocation name
    idle = await startSweep(client, target, fakeInput(`cj${tag.slice(-4)}`, [4], resultsRoot(), tag));
    const kept = sbatch(allocationJobName(idle.workflowId, 1));
    const orphan = sbatch(`infersweep-${tag}-nosuchsweep-deadbeef-a1`);
    jobs.push(kept, orphan);
    await until('both jobs live', async () => (alive(kept) && alive(orphan) ? true : undefined), 30_000);

    const list = await cli(['janitor', '--name-contains', tag, '--json']);
    expect(list.code, list.stderr).toBe(0);
    const v = json<{ jobId: string; verdict: string; sweepId?: string; cancelled: boolean }[]>(list.stdout);
    expect(v.find((x) => x.jobId === kept)).toMatchObject({ verdict: 'running-sweep', sweepId: idle.workflowId, cancelled: false });
    expect(v.find((x) => x.jobId === orphan)).toMatchObject({ verdict: 'unknown-sweep', cancelled: false });
    expect(alive(orphan)).toBe(true);

    const apply = await cli(['janitor', '--name-contains', tag, '--apply']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(new RegExp(`job ${orphan}.*ORPHAN.*cancelled`));
    expect(apply.stdout).toMatch(new RegExp(`job ${kept}.*keep: sweep ${idle.workflowId} is running`));
    await until('orphan gone', async () => (!alive(orphan) ? true : undefined), 30_000);
    expect(alive(kept)).toBe(true);

    // once the sweep is closed, its job is an orphan too
    await idle.handle.terminate('janitor test: sweep closed');
    const after = json<{ jobId: string; verdict: string }[]>((await cli(['janitor', '--name-contains', tag, '--json'])).stdout);
    expect(after.find((x) => x.jobId === kept)?.verdict).toBe('closed-sweep');
  });
});

describe('help and exit codes', () => {
  it('every command has --help with the exit codes; unknown options are usage errors (2)', async () => {
    for (const cmd of [['sweep'], ['status'], ['list'], ['watch'], ['resume'], ['skip'], ['cancel'], ['logs'], ['results'], ['report'], ['schedule'], ['schedule', 'create'], ['janitor'], ['stack']]) {
      const r = await cli([...cmd, '--help']);
      expect(r.code, cmd.join(' ')).toBe(0);
      expect(r.stdout, cmd.join(' ')).toContain('Exit codes:');
    }
    const u = await cli(['status', '--bogus']);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain("unknown option '--bogus'");
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

  it('reads the report file it wrote (sanity of artifacts)', () => {
    const p = join(artifacts, 'report.png');
    if (existsSync(p)) expect(readFileSync(p).subarray(1, 4).toString()).toBe('PNG');
  });
});
