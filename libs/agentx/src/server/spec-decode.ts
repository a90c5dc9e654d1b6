import { z } from 'zod';
import type { Sample } from './prometheus';

/**
 * Speculative decoding over the profiling window (pure), from vLLM's spec-decode counters (vLLM
 * vllm/v1/spec_decode/metrics.py `SpecDecodingProm`): `vllm:spec_decode_num_drafts`,
 * `vllm:spec_decode_num_draft_tokens`, `vllm:spec_decode_num_accepted_tokens` and
 * `vllm:spec_decode_num_accepted_tokens_per_pos{position}`, exposed with `_total`. As vLLM computes them
 * (`compute_acceptance_len`, `compute_acceptance_rate`, its PromQL in the same file):
 * acceptance length = 1 + accepted / drafts (the bonus token included), acceptance rate =
 * accepted / draft tokens, per-position rate = accepted at position k / drafts.
 */
export const SPEC_DECODE_METRICS = {
  drafts: 'vllm:spec_decode_num_drafts_total',
  draftTokens: 'vllm:spec_decode_num_draft_tokens_total',
  accepted: 'vllm:spec_decode_num_accepted_tokens_total',
  acceptedPerPosition: 'vllm:spec_decode_num_accepted_tokens_per_pos_total',
} as const;

export const specDecodeWindowSchema = z
  .object({
    drafts: z.number().nonnegative(),
    draft_tokens: z.number().nonnegative(),
    accepted_tokens: z.number().nonnegative(),
    /** 1 + accepted / drafts; null without a draft in the window. */
    acceptance_length: z.number().nullable(),
    /** accepted / draft tokens (0–1); null without a draft token. */
    acceptance_rate: z.number().nullable(),
    /** accepted at position k / drafts, k = 0…num_speculative_tokens − 1. */
    per_position_rate: z.array(z.number()),
  })
  .strict();
export type SpecDecodeWindow = z.infer<typeof specDecodeWindowSchema>;

/** One endpoint's scrape (window.ts EndpointSnapshot; structural here, window.ts imports this file). */
type Snapshot = { samples: Sample[] | null };

const sum = (samples: readonly Sample[], name: string, filter: (s: Sample) => boolean = () => true): number | null => {
  const hits = samples.filter((s) => s.name === name && filter(s));
  return hits.length === 0 ? null : hits.reduce((a, s) => a + s.value, 0);
};

/**
 * The window's spec-decode counters summed over endpoints and engines, or null when no endpoint exports
 * them at the end (the engine runs no speculative decoding). A counter that went backwards (a restarted
 * server) gives null too: the caller warns, never reports a rate from it.
 */
export function specDecodeWindow(start: readonly Snapshot[], end: readonly Snapshot[]): SpecDecodeWindow | null {
  const all = (snap: readonly Snapshot[]) => snap.flatMap((e) => e.samples ?? []);
  const a = all(start);
  const b = all(end);
  const delta = (name: string, filter?: (s: Sample) => boolean): number | null => {
    const to = sum(b, name, filter);
    if (to === null) return null;
    const d = to - (sum(a, name, filter) ?? 0);
    return d < 0 ? Number.NaN : d;
  };
  const drafts = delta(SPEC_DECODE_METRICS.drafts);
  const draftTokens = delta(SPEC_DECODE_METRICS.draftTokens);
  const accepted = delta(SPEC_DECODE_METRICS.accepted);
  if (drafts === null || draftTokens === null || accepted === null) return null;
  if ([drafts, draftTokens, accepted].some(Number.isNaN)) return null;
  const positions = [
    ...new Set(
      b.filter((s) => s.name === SPEC_DECODE_METRICS.acceptedPerPosition).map((s) => Number(s.labels.position)),
    ),
  ]
    .filter(Number.isInteger)
    .sort((x, y) => x - y);
  const perPosition = positions.map((k) => {
    const d = delta(SPEC_DECODE_METRICS.acceptedPerPosition, (s) => s.labels.position === String(k)) ?? 0;
    return drafts > 0 ? d / drafts : 0;
  });
  return {
    drafts,
    draft_tokens: draftTokens,
    accepted_tokens: accepted,
    acceptance_length: drafts > 0 ? 1 + accepted / drafts : null,
    acceptance_rate: draftTokens > 0 ? accepted / draftTokens : null,
    per_position_rate: perPosition,
  };
}

/**
 * How far a measured acceptance length may sit from the recipe's expected one before the point carries a
 * warning: 15 % of the expected length. A recipe's synthetic acceptance (InferenceX's K3 DSpark recipes set
 * `synthetic_acceptance_length` 2.51) makes the engine accept to that target, so a larger gap means the
 * draft, the sampler or the workload is not the recipe's.
 */
export const ACCEPTANCE_TOLERANCE = 0.15;

/** The validity warning for a point's acceptance length against the recipe's expected value, or null when it is close. */
export function acceptanceWarning(w: SpecDecodeWindow | null, expected: number | undefined): string | null {
  if (expected === undefined) return null;
  if (w === null)
    return `speculative decoding expected (acceptance length ${expected}) but the server exports no spec-decode counters`;
  if (w.acceptance_length === null)
    return `speculative decoding: no draft in the profiling window (expected acceptance length ${expected})`;
  const gap = Math.abs(w.acceptance_length - expected) / expected;
  if (gap <= ACCEPTANCE_TOLERANCE) return null;
  return `speculative decoding: acceptance length ${w.acceptance_length.toFixed(3)} is ${(gap * 100).toFixed(0)} % from the recipe's ${expected} (tolerance ${ACCEPTANCE_TOLERANCE * 100} %): the draft or the workload is not the recipe's`;
}
