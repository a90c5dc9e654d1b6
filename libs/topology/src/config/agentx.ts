import { z } from 'zod';

/**
 * AgentX client settings (the `agentx:` block of a sweep config). Mirrors the flags InferenceX
 * passes to `aiperf profile --scenario inferencex-agentx-mvp` (../shared/reference/agentx-inferencex.md §1.3).
 * Owned by libs/agentx (which consumes it); lives here so the config schema stays one pure schema.
 */
export const traceSourceSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('synthetic'),
    seed: z.number().int().nonnegative().default(42),
    traces: z.number().int().positive().default(64),
    /** Cap on a single request's prompt, tokens (keep below the server's context window). */
    maxContextTokens: z.number().int().positive().default(32768),
  }).strict(),
  z.object({
    kind: z.literal('file'),
    /** JSONL/JSON Weka-style traces on the machine that runs the client. */
    path: z.string().min(1),
  }).strict(),
]);

export const agentxSettingsSchema = z
  .object({
    traces: traceSourceSchema.default({ kind: 'synthetic', seed: 42, traces: 64, maxContextTokens: 32768 }),
    /** Profiling window, seconds (InferenceX default 3600; canonical minimum 900). */
    profileDurationSeconds: z.number().positive().default(3600),
    /** Runs shorter than the canonical minimum must say so explicitly. */
    nonCanonical: z.boolean().default(false),
    canonicalMinDurationSeconds: z.number().positive().default(900),
    randomSeed: z.number().int().nonnegative().default(42),
    trajectoryStartMinRatio: z.number().min(0).max(1).default(0.25),
    trajectoryStartMaxRatio: z.number().min(0).max(1).default(0.75),
    warmupRequestsPerLane: z.number().int().nonnegative().default(10),
    warmupGracePeriodSeconds: z.number().positive().default(1800),
    traceIdleGapCapSeconds: z.number().positive().default(300),
    /** Whole-system idle cap (all lanes thinking at once), seconds. */
    systemIdleGapCapSeconds: z.number().positive().default(60),
    failedRequestThreshold: z.number().min(0).max(1).default(0.1),
    /** Sticky sessions: pin each session to one DP rank with X-data-parallel-rank. */
    stickyDpRouting: z.boolean().default(false),
    /** Which client runs the point: infersweep's own, or the pinned aiperf (bit-for-bit InferenceX). */
    client: z.enum(['infersweep', 'aiperf']).default('infersweep'),
    /** Drain gate between points. */
    drain: z
      .object({
        pollSeconds: z.number().positive().default(10),
        idlePolls: z.number().int().positive().default(3),
        deadlineSeconds: z.number().positive().default(1800),
        scrapeTimeoutSeconds: z.number().positive().default(10),
      })
      .strict()
      .default({ pollSeconds: 10, idlePolls: 3, deadlineSeconds: 1800, scrapeTimeoutSeconds: 10 }),
  })
  .strict()
  .refine((s) => s.trajectoryStartMinRatio <= s.trajectoryStartMaxRatio, {
    message: 'trajectoryStartMinRatio must be ≤ trajectoryStartMaxRatio',
    path: ['trajectoryStartMinRatio'],
  });

export type AgentxSettings = z.infer<typeof agentxSettingsSchema>;
export type TraceSource = z.infer<typeof traceSourceSchema>;
