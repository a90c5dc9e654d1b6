import { z } from 'zod';

/**
 * The `replicates:` block (per orientation, or for the whole sweep): error bars across independent
 * allocations. The sweep measures its points once; then each replicated point is measured again on
 * a fresh allocation per round (round 2 = every replicated point's second replicate, …) until its
 * 95 % CI meets `target` (the calibrated sequential rule, libs/stats sequential.ts; docs/statistics.md)
 * or it has `max` replicates. libs/sweep/src/replicates.ts decides; docs/statistics.md §1 is the math.
 */
const posInt = z.number().int().positive();

/** PointSummary fields a precision target may name (libs/sweep contract.ts), one value per allocation. */
export const REPLICATE_METRICS = [
  'totalThroughputPerGpu',
  'outputThroughputPerGpu',
  'interactivityP50',
  'e2eNormInteractivityP90',
  'ttftP50Ms',
  'ttftP99Ms',
  'itlP50Ms',
  'itlP99Ms',
  'e2elP50Ms',
  'e2elP99Ms',
] as const;
export const replicateMetricSchema = z.enum(REPLICATE_METRICS);
export type ReplicateMetric = z.infer<typeof replicateMetricSchema>;

/** A search's answers a replicate list may name (the point the search ends with). */
export const replicateAnswerSchema = z.enum(['slo-limit', 'knee']);

export const replicatesSchema = z
  .object({
    /**
     * Which points: `all` (default), or a list of configured concurrencies and/or a search's answers
     * (`slo-limit`: the largest concurrency meeting the SLO; `knee`: where the Pareto curve bends).
     */
    points: z
      .union([z.literal('all'), z.array(z.union([posInt, replicateAnswerSchema])).min(1)], {
        error:
          'points is all, or a list of concurrencies and/or slo-limit, knee, e.g. points: [slo-limit] or points: [8, 32]',
      })
      .default('all'),
    /** Replicates every replicated point gets at least (the first pass counts as one). */
    min: z.number().int().min(3, 'min must be ≥ 3: a CI over allocations needs 3 of them').default(3),
    /** Replicates at most, when the target is not met sooner. Default: min (a fixed n). */
    max: posInt.optional(),
    /**
     * Precision targets: the relative half-width of the 95 % CI per metric, e.g.
     * { totalThroughputPerGpu: 0.03, interactivityP50: 0.05 }. A point stops replicating when all are met.
     */
    target: z
      .record(
        z.string(),
        z
          .number()
          .gt(0, 'a target is a relative half-width > 0, e.g. 0.03')
          .lt(1, 'a target is a fraction < 1, e.g. 0.03 for 3 %'),
      )
      .superRefine((t, ctx) => {
        for (const k of Object.keys(t))
          if (!(REPLICATE_METRICS as readonly string[]).includes(k))
            ctx.addIssue({
              code: 'custom',
              path: [k],
              message: `unknown metric ${JSON.stringify(k)}; a replicate target names one of ${REPLICATE_METRICS.join(', ')}`,
            });
      })
      .transform((t) => t as Partial<Record<ReplicateMetric, number>>)
      .optional(),
    /** Each replicate on a fresh allocation, excluding the previous allocation's nodes where the partition has enough. */
    independentAllocations: z.boolean().default(true),
    /** Refuse a plan whose worst case (every replicated point at max) costs more GPU-hours than this. */
    gpuHourBudget: z.number().positive().optional(),
  })
  .strict()
  .refine((r) => r.max === undefined || r.max >= r.min, {
    message: 'max must be ≥ min; raise max or lower min',
    path: ['max'],
  })
  .refine((r) => r.max === undefined || r.max === r.min || (r.target && Object.keys(r.target).length > 0), {
    message:
      'max above min needs a precision target to stop on, e.g. target: { totalThroughputPerGpu: 0.03 }; or drop max for a fixed n = min',
    path: ['target'],
  });

export type ReplicatesConfig = z.infer<typeof replicatesSchema>;
