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
    /** Per engine: requests served (finished, not aborted) during the warmup (post-warmup), or 1 if the engine's series exist (readiness). */
    perEngine: z.record(z.string(), z.number()),
    message: z.string().nullable(),
  })
  .strict();
export type IdleRankCheck = z.infer<typeof idleRankCheckSchema>;

/** vLLM counts aborted and errored requests in request_success_total too (finished_reason="abort"|"error"): they are not served. */
export const NOT_SERVED_REASONS: ReadonlySet<string> = new Set(['abort', 'error']);

/** Requests served per engine label value: request_success_total summed over the served finished reasons (pure). */
export function servedPerEngine(samples: readonly Sample[], family: EngineFamily = 'vllm'): Record<string, number> {
  const spec = FAMILIES[family];
  const out: Record<string, number> = {};
  if (spec.requestSuccess === null || spec.engineLabel === null) return out;
  for (const s of samples) {
    if (s.name !== spec.requestSuccess) continue;
    const e = s.labels[spec.engineLabel];
    if (e === undefined) continue;
    const reason = s.labels.finished_reason ?? s.labels.finish_reason;
    out[e] = (out[e] ?? 0) + (reason !== undefined && NOT_SERVED_REASONS.has(reason) ? 0 : s.value);
  }
  return out;
}

/**
 * Idle-rank check (pure), docs/topology-rules.md rules 19–20:
 *  - readiness: every expected DP engine id must appear as `engine="i"` on `vllm:num_requests_running`;
 *  - post-warmup: `vllm:request_success_total` (finished_reason other than abort/error) must have grown
 *    for every expected engine since `baseline` (the point's start; none = since the server started),
 *    else "idle DP rank i". Readiness probes and earlier points therefore cannot hide an idle rank.
 * `expectedEngines` null/undefined: the family exposes no per-engine label → not applicable (recorded).
 */
export function checkIdleRanks(
  metrics: string | readonly Sample[],
  expectedEngines: readonly number[] | null | undefined,
  phase: 'readiness' | 'post-warmup',
  family: EngineFamily = 'vllm',
  baseline?: string | readonly Sample[],
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
  const parse = (m: string | readonly Sample[]) => (typeof m === 'string' ? parsePrometheus(m).samples : m);
  const samples = parse(metrics);
  const label = spec.engineLabel;
  const metric = phase === 'readiness' ? spec.busyGauges[0]! : spec.requestSuccess;
  const perEngine: Record<string, number> = {};
  if (phase === 'readiness') {
    for (const s of samples) if (s.name === metric && s.labels[label] !== undefined) perEngine[s.labels[label]] = 1;
  } else {
    const now = servedPerEngine(samples, family);
    const before = baseline === undefined ? {} : servedPerEngine(parse(baseline), family);
    for (const [e, v] of Object.entries(now)) perEngine[e] = v - (before[e] ?? 0);
  }
  const present = Object.keys(perEngine)
    .map(Number)
    .filter((n) => Number.isInteger(n))
    .sort((a, b) => a - b);
  const missing =
    phase === 'readiness'
      ? expectedEngines.filter((e) => perEngine[String(e)] === undefined)
      : expectedEngines.filter((e) => !((perEngine[String(e)] ?? 0) > 0));
  for (const e of expectedEngines)
    if (phase === 'post-warmup' && perEngine[String(e)] === undefined) perEngine[String(e)] = 0;
  const message =
    missing.length === 0
      ? null
      : phase === 'readiness'
        ? `DP ranks not managed by this endpoint (hybrid/external LB?): engine ${missing.join(', ')} absent from ${metric}`
        : missing.map((e) => `idle DP rank ${e}`).join('; ') +
          ` (${metric} has no served requests for it ${baseline === undefined ? 'after warmup' : "during this point's warmup"})`;
  return {
    phase,
    applicable: true,
    ok: missing.length === 0,
    expected: [...expectedEngines],
    present,
    missing,
    perEngine,
    message,
  };
}

/**
 * Idle-role gate of a disaggregated (P/D) point (pure; docs/topology-rules.md rule 27): `roles[i]` is the role
 * of metrics endpoint i (the plan's worker endpoints, prefill first). Every role must have finished requests
 * (`vllm:request_success_total`, served reasons only) on its endpoints between the two snapshots, else
 * "idle prefill role …": a router that sends everything to one role, or a prefill group that never hands
 * over, makes the point invalid. Roles whose endpoints were not scraped at both edges are reported as such.
 */
export function idleRoleMessages(
  start: readonly { endpoint: string; samples: Sample[] | null }[],
  end: readonly { endpoint: string; samples: Sample[] | null }[],
  roles: readonly string[],
  family: EngineFamily = 'vllm',
): string[] {
  const served = (snap: { samples: Sample[] | null } | undefined) =>
    snap?.samples ? Object.values(servedPerEngine(snap.samples, family)).reduce((a, b) => a + b, 0) : null;
  const byRole = new Map<string, { done: number; endpoints: string[]; unscraped: string[] }>();
  end.forEach((e, i) => {
    const role = roles[i];
    if (role === undefined) return;
    const r = byRole.get(role) ?? { done: 0, endpoints: [], unscraped: [] };
    r.endpoints.push(e.endpoint);
    const a = served(start.find((s) => s.endpoint === e.endpoint));
    const b = served(e);
    if (a === null || b === null) r.unscraped.push(e.endpoint);
    else r.done += Math.max(0, b - a);
    byRole.set(role, r);
  });
  const out: string[] = [];
  for (const [role, r] of byRole) {
    if (r.unscraped.length > 0)
      out.push(`${role} role: no metrics snapshot of ${r.unscraped.join(', ')} at both edges of the profile`);
    else if (r.done <= 0)
      out.push(`idle ${role} role: no request finished on its workers (${r.endpoints.join(', ')}) during the profile`);
  }
  return out;
}
