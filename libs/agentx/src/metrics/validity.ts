import type { AgentxSettings } from '@infersweep/topology';
import type { Accounting } from './aggregate';
import type { RequestRecord } from '../result';

export interface ValidityInput {
  settings: Pick<
    AgentxSettings,
    | 'profileDurationSeconds'
    | 'canonicalMinDurationSeconds'
    | 'nonCanonical'
    | 'failedRequestThreshold'
    | 'contextOverflowThreshold'
    | 'minMetricCoverage'
  >;
  accounting: Accounting;
  successes: number;
  coverage: number;
  clientSaturatedReason: string | null;
  /** The host gave the client no CPU for longer than the delay limit (client-health.ts healthVerdict). */
  hostSaturatedReason?: string | null;
  /** Time-weighted live sessions / N during profiling (null: not measured, e.g. aiperf). */
  concurrencyHeld: number | null;
  runCancelledReason: string | null;
  serverMetricsMissing: string[];
  idleRankMessages: string[];
  /** A P/D point's role gate (server/idle-ranks.ts checkRoles): an idle role, or one that did not serve every measured request. */
  roleMessages?: string[];
  /** From prefixCacheGate: why cached tokens are missing on multi-turn traffic (null/absent: fine or not required). */
  prefixCacheReason?: string | null;
  /** Output tokens of the successful profiled requests (absent: not counted); 0 with successes is no measurement. */
  outputTokens?: number | null;
}

/** The successful profiled requests' output tokens (osl); null when no request reports one. */
export function outputTokensOf(records: readonly Pick<RequestRecord, 'phase' | 'ok' | 'osl'>[]): number | null {
  const ok = records.filter((r) => r.phase === 'profiling' && r.ok && r.osl !== null);
  return ok.length === 0 ? null : ok.reduce((s, r) => s + (r.osl ?? 0), 0);
}

/**
 * The cached-token gate (pure): with prefix caching on, later turns of a session resend the earlier turns
 * as their prefix, so the server must report cached prompt tokens — per response
 * (usage.prompt_tokens_details.cached_tokens, needs --enable-prompt-tokens-details) or in its prefix-cache
 * hit counter. Neither on any multi-turn request means caching is off (vLLM's default for hybrid models) or
 * unreported: the point did not measure prefix reuse. Returns the reason, or null.
 */
export function prefixCacheGate(
  records: readonly RequestRecord[],
  serverPrefixHits: number | null,
  required: boolean,
): string | null {
  if (!required) return null;
  const multiTurn = records.filter((r) => r.phase === 'profiling' && r.ok && r.turn > 0);
  if (multiTurn.length === 0) return null;
  const reported = multiTurn.filter((r) => r.cached_tokens !== null);
  const clientCached = reported.reduce((s, r) => s + (r.cached_tokens ?? 0), 0);
  if (clientCached > 0 || (serverPrefixHits ?? 0) > 0) return null;
  return (
    `no cached prompt tokens on ${multiTurn.length} multi-turn requests (usage cached_tokens ${reported.length === 0 ? 'absent' : '0'}, ` +
    `server prefix-cache hits ${serverPrefixHits === null ? 'absent' : '0'}): prefix caching is off or unreported — check --enable-prefix-caching and --enable-prompt-tokens-details`
  );
}

/**
 * Validity gates (pure), in InferenceX's order client → validity → metrics coverage. Every failed gate
 * adds one reason; the point is valid only with none. Reason tags reuse aiperf/InferenceX names where
 * they exist (`unsafe_override`, `context_overflow_rate_exceeded`, `run_cancelled`,
 * `insufficient_profile_metric_coverage`).
 */
export function validity(v: ValidityInput): { valid: boolean; reasons: string[] } {
  const reasons: string[] = [];
  const s = v.settings;
  if (v.runCancelledReason) reasons.push(`run_cancelled: ${v.runCancelledReason}`);
  // A short profile is a gate failure unless the run is explicitly marked non-canonical (the record
  // keeps settings.nonCanonical, so such points are never mistaken for publishable ones).
  if (s.profileDurationSeconds < s.canonicalMinDurationSeconds && !s.nonCanonical)
    reasons.push(
      `unsafe_override: profile ${s.profileDurationSeconds} s < canonical minimum ${s.canonicalMinDurationSeconds} s (set agentx.nonCanonical: true for a diagnostic run)`,
    );
  const a = v.accounting;
  const completed = a.records_profiled - a.context_overflow_count;
  if (v.successes < 1) reasons.push('no_successful_requests: num_requests_successful == 0');
  // a "success" that generated nothing is no measurement (the attempt class zero-output, libs/core/src/attempt-class.ts)
  else if (v.outputTokens === 0)
    reasons.push(`zero_output_tokens: ${v.successes} successful requests returned 0 output tokens`);
  const errors = a.records_error_dropped - a.context_overflow_count;
  if (completed > 0 && errors / completed > s.failedRequestThreshold)
    reasons.push(
      `error_rate_exceeded: ${errors}/${completed} = ${(errors / completed).toFixed(4)} > ${s.failedRequestThreshold}`,
    );
  if (a.records_profiled > 0 && a.context_overflow_count / a.records_profiled > s.contextOverflowThreshold)
    reasons.push(
      `context_overflow_rate_exceeded: ${a.context_overflow_count}/${a.records_profiled} > ${s.contextOverflowThreshold}`,
    );
  if (v.coverage < s.minMetricCoverage)
    reasons.push(
      `insufficient_profile_metric_coverage: ${(v.coverage * 100).toFixed(1)} % < ${(s.minMetricCoverage * 100).toFixed(1)} %`,
    );
  if (v.concurrencyHeld !== null && v.concurrencyHeld < 0.99)
    reasons.push(
      `concurrency_not_held: time-weighted live sessions ${(v.concurrencyHeld * 100).toFixed(1)} % of N < 99 %`,
    );
  if (v.clientSaturatedReason) reasons.push(`client_saturated: ${v.clientSaturatedReason}`);
  if (v.hostSaturatedReason) reasons.push(`host_saturated: ${v.hostSaturatedReason}`);
  for (const m of v.serverMetricsMissing) reasons.push(`server_metrics_missing: ${m}`);
  for (const m of v.idleRankMessages) reasons.push(`idle_dp_rank: ${m}`);
  for (const m of v.roleMessages ?? []) reasons.push(`pd_role: ${m}`);
  if (v.prefixCacheReason) reasons.push(`no_cached_tokens: ${v.prefixCacheReason}`);
  return { valid: reasons.length === 0, reasons };
}
