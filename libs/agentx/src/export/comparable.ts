import { defaultPublicDataset } from '@infersweep/topology';
import type { PointResult } from '../result';

/**
 * What an exported point says about itself beyond InferenceX's schema (pure). InferenceX's aggregate has no
 * validity field and no notion of "another workload", so an invalid point or a point of infersweep's own
 * client would read as an ordinary InferenceX result: the export writes these facts into the aggregate's
 * `warnings` (the one free-form field InferenceX's schema has) and into a sidecar file next to it
 * ({@link InferencexSidecar}).
 */

/** InferenceX's profile window (its agentic default; docs/inferencex.md). */
const IX_PROFILE_SECONDS = 3600;

/**
 * Why the point's workload is not InferenceX's (empty: it is): InferenceX runs its pinned aiperf fork on the
 * head node against localhost, replaying its public trace corpus for the model prefix (the 1M-context
 * `semianalysis_cc_traces_weka_062126` for kimik3, …) for 3600 s. Anything else changes TTFT and throughput
 * per GPU enough that the numbers are not comparable with InferenceX's.
 */
export function inferencexWorkloadDifferences(r: PointResult, modelPrefix: string): string[] {
  const s = r.settings;
  const out: string[] = [];
  if (s.client !== 'aiperf') {
    const t = s.traces;
    out.push(
      `client ${s.client} replaying ${t.kind === 'synthetic' ? `${t.traces} synthetic traces (≤ ${t.maxContextTokens} tokens)` : `the trace files ${t.path}`} from the worker host (InferenceX: aiperf on the head node, its public corpus)`,
    );
  } else {
    const corpus = defaultPublicDataset(modelPrefix);
    if (s.aiperf.traces !== 'public') out.push(`aiperf replays the configured traces (InferenceX: ${corpus})`);
    else if ((s.aiperf.publicDataset ?? corpus) !== corpus)
      out.push(`aiperf corpus ${s.aiperf.publicDataset} (InferenceX: ${corpus} for ${modelPrefix || 'this model'})`);
    if (s.aiperf.runOn !== 'head-node')
      out.push('aiperf runs on the worker host (InferenceX: on the head node, against localhost)');
    if (s.aiperf.flavor !== 'inferencex') out.push(`aiperf flavor ${s.aiperf.flavor} (InferenceX: its pinned fork)`);
  }
  if (s.profileDurationSeconds !== IX_PROFILE_SECONDS)
    out.push(`profile ${s.profileDurationSeconds} s (InferenceX: ${IX_PROFILE_SECONDS} s)`);
  return out;
}

/** The sidecar written next to each exported aggregate: `<aggregate>.infersweep` (JSON; not `*.json`, which InferenceX's collector globs). */
export interface InferencexSidecar {
  sweepId: string;
  orientation: string;
  conc: number;
  /** infersweep's validity verdict of the point (InferenceX's schema has no such field). */
  submission_valid: boolean;
  submission_invalid_reasons: string[];
  /** true when the point ran InferenceX's own workload ({@link inferencexWorkloadDifferences} empty). */
  inferencex_comparable: boolean;
  not_comparable_because: string[];
}

export const SIDECAR_SUFFIX = '.infersweep';

export function inferencexSidecar(r: PointResult, modelPrefix: string): InferencexSidecar {
  const differences = inferencexWorkloadDifferences(r, modelPrefix);
  return {
    sweepId: r.identity.sweepId,
    orientation: r.identity.orientation,
    conc: r.conc,
    submission_valid: r.submission_valid,
    submission_invalid_reasons: [...r.submission_invalid_reasons],
    inferencex_comparable: differences.length === 0,
    not_comparable_because: differences,
  };
}

/** The aggregate's `warnings` lines for what the sidecar says (none for a valid point of InferenceX's workload). */
export function sidecarWarnings(s: InferencexSidecar): string[] {
  return [
    ...(s.submission_valid
      ? []
      : [`infersweep: INVALID point, not a submittable result: ${s.submission_invalid_reasons.join('; ')}`]),
    ...(s.inferencex_comparable
      ? []
      : [
          `infersweep: not InferenceX's workload, not comparable with its results: ${s.not_comparable_because.join('; ')}`,
        ]),
  ];
}
