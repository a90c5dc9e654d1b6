/**
 * The SLO-limit search on the real stack against a curve with a known limit (docs/statistics.md
 * "Sixth registration"): the simulator runs at most 4 requests at once with TTFT 50 ± 5 ms and queues
 * the rest, so TTFT p99 ≤ 500 ms (and goodput at TTFT ≤ 500 ms) holds up to c = 4 and fails from
 * c = 5; the metrics proxy (./metrics-proxy.ts) makes windows spuriously invalid. Run by
 * noisy-search.int.test.ts (per commit) and noisy-search.nightly.test.ts (the handful).
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { progressQuery, type Bracket, type PointState, type SweepProgress } from '@infersweep/sweep';
import type { Slo } from '@infersweep/topology';
import {
  cleanupStarted,
  client as temporalClient,
  localSlurm,
  noSubagents,
  notSaturationGated,
  runningWorker,
  start,
  testInput,
  testPlan,
} from '@infersweep/testkit/sweep-harness';
import { throughProxy, type MetricsProxy } from './metrics-proxy';

/** The registered truth: the simulator's --max-num-seqs. */
export const KNOWN_LIMIT = 4;
/** docs/statistics.md "Seventh registration": above a window's start wait below the limit, below queueing above it */
export const TTFT_BOUND_MS = 500;

export interface SearchCase {
  name: string;
  slo: Slo;
  start: number;
  maxConcurrency: number;
  /** windows of the noise-free search (docs/statistics.md "Sixth registration") */
  noiseFreeWindows: number;
  /** the bound named at the failing end */
  binding: string;
}

export const TTFT_CASE: SearchCase = {
  name: 'TTFT p99',
  slo: { ttftMs: { p99: TTFT_BOUND_MS } },
  start: 2,
  maxConcurrency: 16,
  noiseFreeWindows: 5,
  binding: 'TTFT p99',
};

export const GOODPUT_CASE: SearchCase = {
  name: 'goodput',
  slo: { goodput: { attainment: 0.95, ttftMs: TTFT_BOUND_MS } },
  start: 4,
  maxConcurrency: 8,
  noiseFreeWindows: 4,
  binding: 'goodput',
};

/** A Temporal client and a production worker on a task queue of the file's own, for its searches (hooks registered here). */
export function searchStack(prefix: string): { client: () => Client; taskQueue: string } {
  const slurm = localSlurm();
  const taskQueue = `${prefix}-${randomUUID().slice(0, 8)}`;
  let client: Client | undefined;
  let worker: { stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    client = await temporalClient();
    worker = await runningWorker(taskQueue);
  });
  afterAll(async () => {
    await cleanupStarted(slurm);
    await worker?.stop();
    await client?.connection.close();
  });
  return { client: () => client!, taskQueue };
}

export function noisyPlan(k: SearchCase, proxy: Pick<MetricsProxy, 'port'>) {
  const plan = testPlan(
    'latency',
    [k.start],
    (p) => {
      notSaturationGated(p);
      noSubagents(p);
      throughProxy(p, proxy);
    },
    (cfg) => {
      const sim = cfg.clusters.local!.engineOverride;
      if (sim?.kind !== 'simulator') throw new Error('the local cluster profile runs the simulator');
      sim.maxNumSeqs = KNOWN_LIMIT;
      sim.timeToFirstTokenMs = 50;
      sim.interTokenLatencyMs = 5;
      // queued, never refused: the points above the limit stay valid and fail on latency
      sim.extraArgs = [...sim.extraArgs, '--time-to-first-token-std-dev', '5ms', '--max-waiting-queue-length', '64'];
      const o = cfg.orientations.latency!;
      o.concurrency = [k.start];
      o.search = {
        goal: ['slo-limit'],
        slo: k.slo,
        minConcurrency: 1,
        maxConcurrency: k.maxConcurrency,
        maxPoints: 8,
        resolution: { absolute: 1 },
      };
    },
  );
  return plan;
}

export interface SearchOutcome {
  limit: Bracket;
  windows: number;
  /** windows invalid with server_metrics_missing (the proxy's spoil) */
  spoiledWindows: number;
  /** per point: concurrency, windows, TTFT p99 ms and its logSe, goodput attainment, status */
  points: string[];
  wallSeconds: number;
  progress: SweepProgress;
}

const windowsOf = (p: PointState) => [...(p.windows ?? []), p];

/** Run one search to its end; `onProgress` sees every polled progress (the per-commit spoil uses it). */
export async function runSearch(
  client: Client,
  taskQueue: string,
  k: SearchCase,
  proxy: MetricsProxy,
  tag: string,
  onProgress?: (p: SweepProgress) => void,
): Promise<SearchOutcome> {
  const t0 = Date.now();
  const plan = noisyPlan(k, proxy);
  expect(plan.nodes[0]!.launchArgv.join(' ')).toContain(`--max-num-seqs ${KNOWN_LIMIT}`);
  const input = testInput(plan, tag);
  const h = await start(client, input, taskQueue);
  let done = false;
  const result = h.result().finally(() => (done = true));
  if (onProgress)
    while (!done) {
      try {
        onProgress(await h.query(progressQuery));
      } catch {
        // the first workflow task may not have run yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  await result;
  const progress = await h.query(progressQuery);
  const all = progress.points.flatMap(windowsOf);
  const fmt = (p: PointState) =>
    `c=${p.concurrency}: ` +
    windowsOf(p)
      .map((w) => {
        const s = w.summary;
        if (w.status !== 'done' || !s?.valid) return `${w.status} (${(s?.reasons ?? [w.lastError]).join('; ')})`;
        const g = s.goodput ? `, goodput ${(100 * s.goodput.attainment).toFixed(1)} %` : '';
        return `TTFT p99 ${s.ttftP99Ms?.toFixed(0)} ms (logSe ${s.logSe?.ttftP99Ms?.toFixed(3)})${g}`;
      })
      .join(' | ');
  return {
    limit: progress.search!.limit!,
    windows: all.length,
    spoiledWindows: all.filter((w) => (w.summary?.reasons ?? []).some((r) => r.startsWith('server_metrics_missing')))
      .length,
    points: progress.points.map(fmt),
    wallSeconds: (Date.now() - t0) / 1000,
    progress,
  };
}

/** One search's outcome in words: the limit, the windows, the wall time, every window's evidence. */
export function report(o: SearchOutcome): string {
  return `limit ${o.limit.text}; ${o.windows} windows (${o.spoiledWindows} spoiled) in ${o.wallSeconds.toFixed(0)} s\n${o.points.join('\n')}`;
}

/** The registered criterion for one search (docs/statistics.md "Sixth registration"). */
export function expectRegistered(o: SearchOutcome, k: SearchCase): void {
  const why = JSON.stringify({ limit: o.limit, points: o.points }, null, 1);
  expect(o.limit.status, why).toBe('found');
  expect(Math.abs(o.limit.concurrency! - KNOWN_LIMIT), why).toBeLessThanOrEqual(1);
  expect(o.limit.ci!.lower ?? 0, why).toBeLessThanOrEqual(KNOWN_LIMIT);
  expect(o.limit.ci!.upper ?? Infinity, why).toBeGreaterThanOrEqual(KNOWN_LIMIT);
  expect(o.windows, why).toBeLessThanOrEqual(1.5 * k.noiseFreeWindows);
  expect(o.limit.binding, why).toBe(k.binding);
}
