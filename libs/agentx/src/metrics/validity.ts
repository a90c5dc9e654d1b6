import type { AgentxSettings } from '@infersweep/topology';
import type { Accounting } from './aggregate';

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
  /** Time-weighted live sessions / N during profiling (null: not measured, e.g. aiperf). */
  concurrencyHeld: number | null;
  runCancelledReason: string | null;
  serverMetricsMissing: string[];
  idleRankMessages: string[];
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
    reasons.push(`unsafe_override: profile ${s.profileDurationSeconds} s < canonical minimum ${s.canonicalMinDurationSeconds} s (set agentx.nonCanonical: true for a diagnostic run)`);
  const a = v.accounting;
  const completed = a.records_profiled - a.context_overflow_count;
  if (v.successes < 1) reasons.push('no_successful_requests: num_requests_successful == 0');
  const errors = a.records_error_dropped - a.context_overflow_count;
  if (completed > 0 && errors / completed > s.failedRequestThreshold)
    reasons.push(`error_rate_exceeded: ${errors}/${completed} = ${(errors / completed).toFixed(4)} > ${s.failedRequestThreshold}`);
  if (a.records_profiled > 0 && a.context_overflow_count / a.records_profiled > s.contextOverflowThreshold)
    reasons.push(`context_overflow_rate_exceeded: ${a.context_overflow_count}/${a.records_profiled} > ${s.contextOverflowThreshold}`);
  if (v.coverage < s.minMetricCoverage)
    reasons.push(`insufficient_profile_metric_coverage: ${(v.coverage * 100).toFixed(1)} % < ${(s.minMetricCoverage * 100).toFixed(1)} %`);
  if (v.concurrencyHeld !== null && v.concurrencyHeld < 0.99)
    reasons.push(`concurrency_not_held: time-weighted live sessions ${(v.concurrencyHeld * 100).toFixed(1)} % of N < 99 %`);
  if (v.clientSaturatedReason) reasons.push(`client_saturated: ${v.clientSaturatedReason}`);
  for (const m of v.serverMetricsMissing) reasons.push(`server_metrics_missing: ${m}`);
  for (const m of v.idleRankMessages) reasons.push(`idle_dp_rank: ${m}`);
  return { valid: reasons.length === 0, reasons };
}
