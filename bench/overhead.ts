/**
 * Orchestration overhead of a real sweep: runs one sweep through the CLI (`bin/infersweep sweep … --json`,
 * the real worker on the real local stack), then reads its Temporal history through the Temporal client
 * (never the workflow's internals, which move between packages) and its result records, and prints where
 * the wall time went (bench/lib/overhead.ts): per category, per point, per sweep; history bytes and events
 * per point. Goal (README): overhead beyond the engine's own start-up ≤ 5 % of a sweep.
 *   npm run bench -- overhead [--cluster local|local-vllm] [--config FILE] [--orientation balanced] [--points 4,8] [--sweep ID]
 * (`--cluster local-vllm` defaults to configs/tiny-moe-local-vllm.yaml and points 1,2.)
 * `--sweep ID` analyses an existing sweep instead of running one (its results folder must be on this host).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ResultsLayout } from '@infersweep/core';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { fmt, options, repoDir } from './common';
import {
  CATEGORIES,
  activitySpans,
  overheadBreakdown,
  projectedShare,
  type JsonHistoryEvent,
  type OverheadReport,
  type PointWindow,
} from './lib/overhead';

function stackValue(key: string): string | undefined {
  const file = join(process.env.INFERSWEEP_DATA ?? join(repoDir, '.infersweep'), 'stack', 'env');
  if (!existsSync(file)) return undefined;
  for (const line of readFileSync(file, 'utf8').split('\n'))
    if (line.startsWith(`${key}=`)) return line.slice(key.length + 1);
  return undefined;
}

function sh(cmd: string, args: string[], opts: { stdout?: (s: string) => void } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, {
      cwd: repoDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, INFERSWEEP_PLAIN: '1' },
    });
    let err = '';
    p.stdout.on('data', (d: Buffer) => opts.stdout?.(d.toString()));
    p.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0 || code === 3 ? resolve(code) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
}

/** Run one sweep through the CLI; returns its workflow id and results folder. */
async function runSweep(
  cluster: string,
  orientation: string,
  points: string,
  config: string | undefined,
): Promise<{ sweepId: string; resultsDir: string; exit: number }> {
  let out = '';
  const args = [
    'sweep',
    '--orientation',
    orientation,
    '--cluster',
    cluster,
    '--points',
    points,
    '--label',
    `bench-${Date.now()}`,
    '--json',
    ...(config ? ['--config', config] : []),
  ];
  const exit = await sh(join(repoDir, 'bin', 'infersweep'), args, {
    stdout: (s) => (out += s),
  });
  const summary = JSON.parse(out.trim().split('\n')[0]!) as {
    sweepId: string;
    orientations: Array<{ resultsDir: string }>;
  };
  return { sweepId: summary.sweepId, resultsDir: summary.orientations[0]!.resultsDir, exit };
}

function pointWindows(resultsDir: string, concurrencies: number[]): PointWindow[] {
  const out: PointWindow[] = [];
  const layout = new ResultsLayout(resultsDir);
  for (const c of concurrencies) {
    const f = layout.pointRecord(c);
    if (!existsSync(f)) continue;
    const t = (
      JSON.parse(readFileSync(f, 'utf8')) as {
        timing: {
          started_at: string;
          profiling_started_at: string | null;
          profiling_ended_at: string | null;
          ended_at: string;
        };
      }
    ).timing;
    const ms = (s: string | null): number | null => (s === null ? null : Date.parse(s));
    out.push({
      concurrency: c,
      clientStartMs: ms(t.started_at)!,
      profileStartMs: ms(t.profiling_started_at),
      profileEndMs: ms(t.profiling_ended_at),
      clientEndMs: ms(t.ended_at)!,
    });
  }
  return out;
}

export interface OverheadResult {
  sweepId: string;
  cluster: string;
  report: OverheadReport;
  historyBytes: number | null;
  historyEvents: number;
}

const s = (ms: number): string => (ms / 1000).toFixed(1);
const pc = (x: number): string => `${(100 * x).toFixed(1)} %`;

export async function overheadBench(args: string[]): Promise<OverheadResult> {
  const opt = options(args);
  const cluster = opt('--cluster') ?? 'local';
  const orientation = opt('--orientation') ?? 'balanced';
  const points = opt('--points') ?? (cluster === 'local-vllm' ? '1,2' : '4,8');
  // the real-vLLM profile lives in its own config (configs/tiny-moe-local-vllm.yaml)
  const config = opt('--config') ?? (cluster === 'local-vllm' ? 'configs/tiny-moe-local-vllm.yaml' : undefined);
  let sweepId = opt('--sweep');
  let resultsDir: string | undefined;
  const t0 = performance.now();
  if (!sweepId) {
    await sh('bash', [join(repoDir, 'scripts', 'stack.sh'), 'up'], {});
    const r = await runSweep(cluster, orientation, points, config);
    sweepId = r.sweepId;
    resultsDir = r.resultsDir;
  }
  const address = process.env.TEMPORAL_ADDRESS ?? stackValue('INFERSWEEP_TEMPORAL_ADDRESS') ?? '127.0.0.1:7233';
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
    const handle = client.workflow.getHandle(sweepId);
    const desc = await handle.describe();
    const history = await handle.fetchHistory();
    const events = (JSON.parse(historyToJSON(history)) as { events: JsonHistoryEvent[] }).events;
    const spans = activitySpans(events);
    resultsDir ??= (desc.memo as { resultsDir?: string } | undefined)?.resultsDir;
    if (!resultsDir) throw new Error(`sweep ${sweepId}: no resultsDir in its memo; pass a sweep started by infersweep`);
    const concs = [
      ...new Set(
        spans.activities.filter((a) => a.type === 'runPoint' && a.concurrency !== undefined).map((a) => a.concurrency!),
      ),
    ];
    const report = overheadBreakdown({ ...spans, points: pointWindows(resultsDir, concs) });
    const nPoints = Math.max(1, report.points.length);
    console.log(
      `\n# Orchestration overhead — sweep ${sweepId} (cluster ${cluster}, ${report.points.length} points, ${desc.status.name}); bench wall ${s(performance.now() - t0)} s`,
    );
    console.log('| where the sweep wall time went | s | share |');
    console.log('|---|---|---|');
    for (const c of CATEGORIES)
      if (report.byCategory[c] > 0)
        console.log(`| ${c} | ${s(report.byCategory[c])} | ${pc(report.byCategory[c] / report.wallMs)} |`);
    console.log(`| **sweep wall** | ${s(report.wallMs)} | 100 % |`);
    console.log('\n| point | activity s | profiled s | drain gate s | warmup s | tail s | outside the window |');
    console.log('|---|---|---|---|---|---|---|');
    for (const p of report.points)
      console.log(
        `| c=${p.concurrency} | ${s(p.activityMs)} | ${s(p.profiledMs)} | ${s(p.drainGateMs)} | ${s(p.warmupMs)} | ${s(p.tailMs)} | ${pc(p.outsideShare)} |`,
      );
    const proj = projectedShare(report, 1800);
    console.log(
      `\n- outside the profiled windows: ${pc(report.outsideShare)} of the sweep (${s(report.outsideMs)} s); beyond the engine's start-up: ${pc(report.beyondStartupShare)} (goal ≤ 5 %)`,
    );
    console.log(
      `- the same fixed costs with the canonical 1800 s window per point (extrapolated): ${pc(proj.beyondStartup)} beyond start-up`,
    );
    console.log(
      `- history: ${desc.historySize ?? 'n/a'} bytes, ${events.length} events → ${fmt((desc.historySize ?? NaN) / nPoints)} bytes and ${fmt(events.length / nPoints, 1)} events per point`,
    );
    return { sweepId, cluster, report, historyBytes: desc.historySize ?? null, historyEvents: events.length };
  } finally {
    await connection.close();
  }
}
