import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TraceFormatError } from '../errors';
import { wekaTraceSchema, type WekaTrace } from './model';

/**
 * Parse trace text (pure). Accepts one JSON trace, a JSON array of traces, or JSONL (one trace per line).
 * Every trace is validated against the Weka schema; duplicate ids are rejected.
 */
export function parseTraces(text: string, source = '<text>'): WekaTrace[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  let raw: unknown[];
  try {
    if (trimmed.startsWith('[')) raw = JSON.parse(trimmed) as unknown[];
    else if (trimmed.startsWith('{') && !/\}\s*\n\s*\{/.test(trimmed)) raw = [JSON.parse(trimmed)];
    else
      raw = trimmed
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as unknown);
  } catch (err) {
    throw new TraceFormatError(`${source}: not JSON/JSONL: ${(err as Error).message}`, { source });
  }
  const out: WekaTrace[] = [];
  const seen = new Set<string>();
  raw.forEach((r, i) => {
    const parsed = wekaTraceSchema.safeParse(r);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TraceFormatError(
        `${source}: trace #${i} is not a Weka trace: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
        { source, index: i },
      );
    }
    if (seen.has(parsed.data.id)) throw new TraceFormatError(`${source}: duplicate trace id ${parsed.data.id}`, { source });
    seen.add(parsed.data.id);
    out.push(parsed.data);
  });
  return out;
}

/** Load traces from a file (.json/.jsonl) or a directory of them (sorted by name, so loading is deterministic). */
export function loadTraces(path: string): WekaTrace[] {
  const st = statSync(path);
  if (!st.isDirectory()) return parseTraces(readFileSync(path, 'utf8'), path);
  const files = readdirSync(path)
    .filter((f) => f.endsWith('.json') || f.endsWith('.jsonl'))
    .sort();
  const all: WekaTrace[] = [];
  const seen = new Set<string>();
  for (const f of files) {
    for (const t of parseTraces(readFileSync(join(path, f), 'utf8'), join(path, f))) {
      if (seen.has(t.id)) throw new TraceFormatError(`${path}: duplicate trace id ${t.id}`, { source: path });
      seen.add(t.id);
      all.push(t);
    }
  }
  if (all.length === 0) throw new TraceFormatError(`${path}: no traces found`, { source: path });
  return all;
}
