import type { TraceSource } from '@infersweep/topology';
import { generateTraces } from './trace/generator';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { loadTraces, loadTracesAsync } from './trace/loader';
import type { WekaTrace } from './trace/model';

/** Resolve the configured trace source into traces (+ provenance for the result record). */
export function resolveTraces(
  src: TraceSource,
  model = 'synthetic-agent',
): {
  traces: WekaTrace[];
  dataset: {
    source_type: 'synthetic' | 'file';
    loader: string;
    path: string | null;
    seed: number | null;
    entry_count: number;
  };
} {
  if (src.kind === 'synthetic') {
    const traces = generateTraces({
      seed: src.seed,
      traces: src.traces,
      maxContextTokens: src.maxContextTokens,
      thinkTimeScale: src.thinkTimeScale,
      subagentProbability: src.subagentProbability,
      model,
    });
    return {
      traces,
      dataset: {
        source_type: 'synthetic',
        loader: 'infersweep-synthetic-v1',
        path: null,
        seed: src.seed,
        entry_count: traces.length,
      },
    };
  }
  const traces = loadTraces(src.path);
  return {
    traces,
    dataset: { source_type: 'file', loader: 'weka_trace', path: src.path, seed: null, entry_count: traces.length },
  };
}

type Resolved = ReturnType<typeof resolveTraces>;

/** A trace file's or folder's identity for the cache: every file's path, size and mtime. */
async function filesKey(path: string): Promise<string> {
  const st = await stat(path);
  if (!st.isDirectory()) return `${path}:${st.size}:${st.mtimeMs}`;
  const names = (await readdir(path)).sort();
  const parts = await Promise.all(
    names.map(async (n) => stat(join(path, n)).then((s) => `${n}:${s.size}:${s.mtimeMs}`)),
  );
  return `${path}/{${parts.join(',')}}`;
}
/** Trace sets a worker loaded, by source (and a file's size and mtime): a few, most recent last. */
const cache = new Map<string, Resolved>();
const CACHED_SETS = 4;

/**
 * {@link resolveTraces} for a long-lived process: a trace file is loaded without holding the event
 * loop (loadTracesAsync), and each trace set is loaded once per process while its files are unchanged
 * (every point of a sweep uses the same set). The result is shared: callers must not mutate it.
 */
export async function resolveTracesAsync(src: TraceSource, model = 'synthetic-agent'): Promise<Resolved> {
  const key = src.kind === 'file' ? `file:${await filesKey(src.path)}` : `synthetic:${model}:${JSON.stringify(src)}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const r: Resolved =
    src.kind === 'file'
      ? await loadTracesAsync(src.path).then((traces) => ({
          traces,
          dataset: {
            source_type: 'file' as const,
            loader: 'weka_trace',
            path: src.path,
            seed: null,
            entry_count: traces.length,
          },
        }))
      : resolveTraces(src, model);
  cache.set(key, r);
  while (cache.size > CACHED_SETS) cache.delete(cache.keys().next().value!);
  return r;
}
