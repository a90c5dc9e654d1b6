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
  })
  .strict()
  .refine((s) => Object.values(s).some((v) => v !== undefined), {
    message:
      'an SLO needs at least one bound: ttftMs, itlMs, e2elMs (p50/p99 in ms) or maxErrorRate, e.g. ttftMs: { p99: 2000 }',
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
