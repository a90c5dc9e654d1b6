import { z } from 'zod';
import { FAMILIES, type EngineFamily } from './families';
import { parsePrometheus, type Sample } from './prometheus';

export const idleRankCheckSchema = z
  .object({
    phase: z.enum(['readiness', 'post-warmup']),
    applicable: z.boolean(),
    ok: z.boolean(),
    expected: z.array(z.number().int()).nullable(),
    present: z.array(z.number().int()),
    missing: z.array(z.number().int()),
    /** Per engine: requests served (post-warmup) or 1 if the engine's series exist (readiness). */
    perEngine: z.record(z.string(), z.number()),
    message: z.string().nullable(),
  })
  .strict();
export type IdleRankCheck = z.infer<typeof idleRankCheckSchema>;

/**
 * Idle-rank check (pure), vllm-topology.md rules 19–20:
 *  - readiness: every expected DP engine id must appear as `engine="i"` on `vllm:num_requests_running`;
 *  - post-warmup: `vllm:request_success_total` summed over finished_reason/finish_reason must be > 0 for
 *    every expected engine, else "idle DP rank i".
 * `expectedEngines` null/undefined: the family exposes no per-engine label → not applicable (recorded).
 */
export function checkIdleRanks(
  metrics: string | readonly Sample[],
  expectedEngines: readonly number[] | null | undefined,
  phase: 'readiness' | 'post-warmup',
  family: EngineFamily = 'vllm',
): IdleRankCheck {
  const spec = FAMILIES[family];
  if (expectedEngines === null || expectedEngines === undefined || spec.engineLabel === null) {
    return {
      phase,
      applicable: false,
      ok: true,
      expected: expectedEngines ? [...expectedEngines] : null,
      present: [],
      missing: [],
      perEngine: {},
      message:
        spec.engineLabel === null
          ? `not applicable: the ${family} family exposes no per-engine label`
          : 'not applicable: the deployment exposes no per-engine label (expectedEngines not given)',
    };
  }
  const samples = typeof metrics === 'string' ? parsePrometheus(metrics).samples : metrics;
  const label = spec.engineLabel;
  const metric = phase === 'readiness' ? spec.busyGauges[0]! : spec.requestSuccess;
  const perEngine: Record<string, number> = {};
  if (metric !== null) {
    for (const s of samples) {
      if (s.name !== metric) continue;
      const e = s.labels[label];
      if (e === undefined) continue;
      perEngine[e] = (perEngine[e] ?? 0) + (phase === 'readiness' ? 0 : s.value);
    }
  }
  const present = Object.keys(perEngine)
    .map(Number)
    .filter((n) => Number.isInteger(n))
    .sort((a, b) => a - b);
  const missing =
    phase === 'readiness'
      ? expectedEngines.filter((e) => perEngine[String(e)] === undefined)
      : expectedEngines.filter((e) => !((perEngine[String(e)] ?? 0) > 0));
  if (phase === 'readiness') for (const k of Object.keys(perEngine)) perEngine[k] = 1;
  const message =
    missing.length === 0
      ? null
      : phase === 'readiness'
        ? `DP ranks not managed by this endpoint (hybrid/external LB?): engine ${missing.join(', ')} absent from ${metric}`
        : missing.map((e) => `idle DP rank ${e}`).join('; ') + ` (${metric} has no successes for it after warmup)`;
  return { phase, applicable: true, ok: missing.length === 0, expected: [...expectedEngines], present, missing, perEngine, message };
}
