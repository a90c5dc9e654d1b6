import type { TraceSource } from '@infersweep/topology';
import { generateTraces } from './trace/generator';
import { loadTraces } from './trace/loader';
import type { WekaTrace } from './trace/model';

/** Resolve the configured trace source into traces (+ provenance for the result record). */
export function resolveTraces(
  src: TraceSource,
  model = 'synthetic-agent',
): {
  traces: WekaTrace[];
  dataset: { source_type: 'synthetic' | 'file'; loader: string; path: string | null; seed: number | null; entry_count: number };
} {
  if (src.kind === 'synthetic') {
    const traces = generateTraces({
      seed: src.seed,
      traces: src.traces,
      maxContextTokens: src.maxContextTokens,
      thinkTimeScale: src.thinkTimeScale,
      model,
    });
    return {
      traces,
      dataset: { source_type: 'synthetic', loader: 'infersweep-synthetic-v1', path: null, seed: src.seed, entry_count: traces.length },
    };
  }
  const traces = loadTraces(src.path);
  return { traces, dataset: { source_type: 'file', loader: 'weka_trace', path: src.path, seed: null, entry_count: traces.length } };
}
