/** Synthetic series of history points: a level, seeded normal noise, steps, outliers, context changes. */
import { NO_METRICS, type HistoryPoint, type RunContext } from '@infersweep/history';
import { mulberry32 as prng } from '@infersweep/stats';

export const KEY = {
  config: 'kimik3',
  orientation: 'tep8',
  model: 'kimi-k3',
  gpu: 'h200x8',
  cluster: 'alpha',
  client: 'infersweep',
  workload: 'public/weka',
  concurrency: 32,
} as const;
export const CONTEXT: RunContext = {
  cluster: 'alpha',
  image: 'vllm/vllm-openai:v0.11.0',
  engineVersion: '0.11.0',
  launchFingerprint: 'f00d',
  planHash: '0123456789abcdef',
};

/** Standard normal draws from a seeded uniform generator (Box-Muller). */
export function normal(seed: number): () => number {
  const u = prng(seed);
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

export interface RunSpec {
  throughput: number;
  valid?: boolean;
  context?: Partial<RunContext>;
  ttftP50Ms?: number;
}

/** One history point per spec, a day apart, run ids `r00`, `r01`, … */
export function series(specs: readonly RunSpec[]): HistoryPoint[] {
  return specs.map((s, i) => ({
    runId: `r${String(i).padStart(2, '0')}`,
    time: new Date(Date.UTC(2026, 0, 1 + i, 2)).toISOString(),
    resultsDir: `/results/r${i}`,
    key: { ...KEY },
    context: { ...CONTEXT, ...s.context },
    valid: s.valid ?? true,
    invalidReasons: s.valid === false ? ['error rate 0.3 > 0.1'] : [],
    metrics: { ...NO_METRICS, throughputPerGpu: s.throughput, ttftP50Ms: s.ttftP50Ms ?? null },
  }));
}

/**
 * `baselineRuns` runs around `level` with relative noise `sigma`, then `stepRuns` runs moved by
 * `step` (relative; -0.1 = 10 % lower).
 */
export function noisySeries(
  seed: number,
  o: { baselineRuns: number; stepRuns: number; step: number; sigma: number; level?: number },
): RunSpec[] {
  const z = normal(seed);
  const level = o.level ?? 1000;
  return Array.from({ length: o.baselineRuns + o.stepRuns }, (_, i) => ({
    throughput: level * (1 + (i >= o.baselineRuns ? o.step : 0)) * (1 + o.sigma * z()),
  }));
}
