/**
 * Results folders the way a sweep writes them, for the history's tests and the CLI's: a real plan
 * of the shipped config (local cluster, orientation latency) and point records derived from one the
 * point activity wrote (libs/testkit/fixtures/point-record.json), at the throughputs a test gives.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, ResultsLayout } from '@infersweep/core';
import { parseSweepConfig, planSweep } from '@infersweep/topology';

/** A point record the point activity wrote on the local stack (the source of every derived record). */
export const POINT_RECORD_FILE = join(__dirname, '../fixtures/point-record.json');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const record = JSON.parse(readFileSync(POINT_RECORD_FILE, 'utf8')) as Record<string, any>;

// the shipped config through topology's pure parser (libs/history sits below libs/orchestrator: no config-file adapter here)
const CONFIG_FILE = join(repoRoot, 'configs', 'kimik3-fp4-h200.yaml');
const loaded = parseSweepConfig(readFileSync(CONFIG_FILE, 'utf8'), {
  file: 'configs/kimik3-fp4-h200.yaml',
  env: { ...process.env, INFERSWEEP_STACK: '/stack' },
  clusters: ['local'],
});
export const plan = planSweep(loaded.config, {
  orientation: 'latency',
  cluster: 'local',
  points: [1, 2],
  source: loaded.source,
});

/** A results folder `<root>/<runId>` with the plan and one record per point at the given throughputs. */
export function writeRun(
  root: string,
  runId: string,
  day: number,
  tput: Record<number, number>,
  opts: { image?: string; valid?: boolean; points?: number[]; orientation?: string } = {},
): string {
  const dir = join(root, runId);
  const layout = new ResultsLayout(dir);
  mkdirSync(dir, { recursive: true });
  // the plan configures the points the run has records for (a configured point without one is a failed point)
  const points = opts.points ?? Object.keys(tput).map(Number);
  const orientation = opts.orientation ?? plan.orientation;
  writeFileSync(layout.planFile, JSON.stringify({ ...plan, points, orientation, image: opts.image ?? plan.image }));
  for (const [c, t] of Object.entries(tput)) {
    const r = structuredClone(record);
    r.identity.sweepId = runId;
    r.identity.planHash = plan.planHash;
    r.conc = Number(c);
    r.request_metrics.throughput.per_gpu.total_tput_tps = t;
    r.request_metrics.latency.intvty.p50 = t / 10;
    r.timing.started_at = new Date(Date.UTC(2026, 0, day, 2, Number(c))).toISOString();
    r.submission_valid = opts.valid ?? true;
    r.submission_invalid_reasons = opts.valid === false ? ['error rate 0.3 > 0.1'] : [];
    mkdirSync(layout.pointDir(Number(c)), { recursive: true });
    writeFileSync(layout.pointRecord(Number(c)), JSON.stringify(r));
  }
  return dir;
}

/** a small deterministic run-to-run wobble, ±1 % */
export const wobble = (i: number) => 1 + 0.01 * Math.sin(i * 2.3);
