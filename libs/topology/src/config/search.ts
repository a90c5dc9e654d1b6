import { z } from 'zod';

/**
 * The `search:` block of an orientation: instead of guessing the whole concurrency list, the sweep
 * measures the configured points and then adds points itself (libs/sweep/src/search.ts decides
 * which), until it has found the largest concurrency meeting the SLO (`slo-limit`, to `resolution`)
 * and/or placed points where the Pareto curve of throughput per GPU against interactivity bends
 * most (`frontier`). Bounded by min/max concurrency, a point count and a GPU-hour budget.
 */
const posInt = z.number().int().positive();
const ms = z.number().positive();

/** Latency percentiles a point's summary carries (libs/sweep PointSummary), milliseconds. */
const percentilesSchema = z
  .object({ p50: ms.optional(), p99: ms.optional() })
  .strict()
  .refine((p) => p.p50 !== undefined || p.p99 !== undefined, 'give p50 and/or p99 (milliseconds), e.g. { p99: 2000 }');

/**
 * Goodput (DistServe, as aiperf's `--goodput` and GuideLLM use it): a profiled request is good when it
 * succeeded and its TTFT, TPOT ((E2E − TTFT)/(OSL − 1)) and E2E latency are each ≤ the given bound;
 * the point meets the SLO when good / profiled requests ≥ `attainment`.
 */
export const goodputSloSchema = z
  .object({
    /** The share of good requests a point needs (0.95 = 95 %). */
    attainment: z.number().gt(0).max(1).default(0.95),
    ttftMs: ms.optional(),
    tpotMs: ms.optional(),
    e2elMs: ms.optional(),
  })
  .strict()
  .refine((g) => g.ttftMs !== undefined || g.tpotMs !== undefined || g.e2elMs !== undefined, {
    message:
      'goodput needs at least one per-request bound: ttftMs, tpotMs or e2elMs (ms), e.g. { attainment: 0.95, ttftMs: 2000 }',
  });
export type GoodputSlo = z.infer<typeof goodputSloSchema>;

export const sloSchema = z
  .object({
    /** Time to first token, ms. */
    ttftMs: percentilesSchema.optional(),
    /** Inter-token latency, ms. */
    itlMs: percentilesSchema.optional(),
    /** End-to-end request latency, ms. */
    e2elMs: percentilesSchema.optional(),
    /** Failed requests / profiled requests, at most (0.01 = 1 %). */
    maxErrorRate: z.number().min(0).max(1).optional(),
    /**
     * InferenceX's AgentX axis, at least: P90 E2E-normalized interactivity, 1 / p90(E2EL/OSL) over the
     * point's successful requests, tok/s/user.
     */
    minE2eNormInteractivityP90: z.number().positive().optional(),
    /** Per-request SLO attainment (DistServe's goodput); every point gets the metric when this is given. */
    goodput: goodputSloSchema.optional(),
  })
  .strict()
  .refine((s) => Object.values(s).some((v) => v !== undefined), {
    message:
      'an SLO needs at least one bound: ttftMs, itlMs, e2elMs (p50/p99 in ms), maxErrorRate, minE2eNormInteractivityP90 or goodput, e.g. ttftMs: { p99: 2000 }',
  });

export const searchGoalSchema = z.enum(['slo-limit', 'frontier']);

/** How close the SLO limit must be bracketed: the failing point at most this far above the passing one. */
export const resolutionSchema = z.union([
  z.object({ absolute: posInt }).strict(),
  z.object({ relative: z.number().gt(0).max(1) }).strict(),
]);

export const searchSchema = z
  .object({
    /** `slo-limit` needs `slo`; `frontier` places points where the throughput/interactivity curve bends. */
    goal: z
      .union([searchGoalSchema, z.array(searchGoalSchema).min(1)], {
        error: 'goal is slo-limit, frontier or a list of both, e.g. goal: [slo-limit, frontier]',
      })
      .transform((g) => (Array.isArray(g) ? [...new Set(g)] : [g])),
    slo: sloSchema.optional(),
    minConcurrency: posInt.default(1),
    maxConcurrency: posInt,
    /** Points the search may add beyond the configured ones. */
    maxPoints: posInt.default(12),
    /** Stop adding points once the sweep's points would cost more GPU-hours than this (each point at its planned budget). */
    gpuHourBudget: z.number().positive().optional(),
    /** Default: the limit to within 10 % of itself (at least 1). */
    resolution: resolutionSchema.default({ relative: 0.1 }),
  })
  .strict()
  .refine((s) => s.minConcurrency <= s.maxConcurrency, {
    message: 'minConcurrency must be ≤ maxConcurrency; raise maxConcurrency or lower minConcurrency',
    path: ['maxConcurrency'],
  })
  .refine((s) => !s.goal.includes('slo-limit') || s.slo !== undefined, {
    message:
      'goal slo-limit needs an slo block, e.g. slo: { ttftMs: { p99: 2000 }, maxErrorRate: 0.01 }; or use goal: frontier',
    path: ['slo'],
  });

export type Slo = z.infer<typeof sloSchema>;
