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

/** What one request_success_total sample counts as served: its value, or 0 for a not-served finished reason. */
function servedValue(s: Sample): number {
  const reason = s.labels.finished_reason ?? s.labels.finish_reason;
  return reason !== undefined && NOT_SERVED_REASONS.has(reason) ? 0 : s.value;
}

/** Requests served per engine label value: request_success_total summed over the served finished reasons (pure). */
export function servedPerEngine(samples: readonly Sample[], family: EngineFamily = 'vllm'): Record<string, number> {
  const spec = FAMILIES[family];
  const out: Record<string, number> = {};
  if (spec.requestSuccess === null || spec.engineLabel === null) return out;
  for (const s of samples) {
    if (s.name !== spec.requestSuccess) continue;
    const e = s.labels[spec.engineLabel];
    if (e === undefined) continue;
    out[e] = (out[e] ?? 0) + servedValue(s);
  }
  return out;
}

/**
 * Requests served over a whole endpoint, every engine and label (request_success_total, served reasons only;
 * pure); null when the family has no such counter.
 */
export function servedTotal(samples: readonly Sample[], family: EngineFamily = 'vllm'): number | null {
  const name = FAMILIES[family].requestSuccess;
  if (name === null) return null;
  let n = 0;
  for (const s of samples) if (s.name === name) n += servedValue(s);
  return n;
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

/** One role of a P/D point over its profile window (rule 27): what its workers served against what the client measured. */
export const roleCheckSchema = z
  .object({
    role: z.string(),
    endpoints: z.array(z.string()),
    /** Requests its workers finished (request_success_total, served reasons) between the window's snapshots; null: unscraped. */
    served: z.number().nullable(),
    /** Requests the client completed successfully inside the window; null: not compared (no profile). */
    client_requests: z.number().int().nullable(),
    /** The allowed |served − client_requests|: the most requests the client had in flight (those at the window's end). */
    tolerance: z.number().int().nullable(),
    ok: z.boolean(),
    message: z.string().nullable(),
  })
  .strict();
export type RoleCheck = z.infer<typeof roleCheckSchema>;

type Snap = { endpoint: string; samples: Sample[] | null };

/**
 * The role gate of a disaggregated (P/D) point (pure; docs/topology-rules.md rule 27): `roles[i]` is the role
 * of metrics endpoint i (the plan's worker endpoints, prefill first). Each role's workers must have finished
 * requests (`vllm:request_success_total`, served reasons only: llm-d's simulator counts a prefill as
 * `finish_reason="remote_decode"`, vLLM's prefill worker as `length`) between the two snapshots, else
 * "idle prefill role …". With `client` given (the requests the client completed inside the window and the most
 * it had in flight), each role must have served every one of them: the start snapshot is taken after the warmup
 * drained, so a measured request's prefill and decode both finish after it, and only requests still in flight
 * when the end snapshot is taken can separate the server's count from the client's — |served − client| ≤ the
 * most requests in flight, else "not every measured request went through the … role" (a router that bypasses
 * prefill for some requests, or sends one request twice). Roles whose endpoints were not scraped at both edges
 * are reported as such.
 */
export function checkRoles(
  start: readonly Snap[],
  end: readonly Snap[],
  roles: readonly string[],
  client: { requests: number; maxInFlight: number } | null,
  family: EngineFamily = 'vllm',
): RoleCheck[] {
  // the whole endpoint, with or without per-engine labels (llm-d's simulator has none)
  const served = (snap: { samples: Sample[] | null } | undefined) =>
    snap?.samples ? servedTotal(snap.samples, family) : null;
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
  return [...byRole].map(([role, r]) => {
    const base = {
      role,
      endpoints: r.endpoints,
      served: r.unscraped.length > 0 ? null : r.done,
      client_requests: client?.requests ?? null,
      tolerance: client?.maxInFlight ?? null,
    };
    const message =
      r.unscraped.length > 0
        ? `${role} role: no served-request count of ${r.unscraped.join(', ')} at both edges of the profile`
        : r.done <= 0
          ? `idle ${role} role: no request finished on its workers (${r.endpoints.join(', ')}) during the profile`
          : client !== null && Math.abs(r.done - client.requests) > client.maxInFlight
            ? `${role} role served ${r.done} requests during the profile, the client completed ${client.requests} ` +
              `(± ${client.maxInFlight} in flight): not every measured request went through the ${role} role`
            : null;
    return { ...base, ok: message === null, message };
  });
}

/** The role gate's messages without the client's count (every role busy, every endpoint scraped). */
export function idleRoleMessages(
  start: readonly Snap[],
  end: readonly Snap[],
  roles: readonly string[],
  family: EngineFamily = 'vllm',
): string[] {
  return checkRoles(start, end, roles, null, family).flatMap((c) => (c.message === null ? [] : [c.message]));
}
