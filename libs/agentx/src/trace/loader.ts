import { readFileSync, readdirSync, statSync } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { TraceFormatError } from '../errors';
import { wekaTraceSchema, type WekaTrace } from './model';

/**
 * Parse trace text (pure). Accepts one JSON trace, a JSON array of traces, or JSONL (one trace per line).
 * Every trace is validated against the Weka schema; duplicate ids are rejected.
 */
export function parseTraces(text: string, source = '<text>'): WekaTrace[] {
  const raw = rawTraces(text, source);
  const out: WekaTrace[] = [];
  const seen = new Set<string>();
  raw.forEach((r, i) => out.push(validTrace(r, i, source, seen)));
  return out;
}

/** One validated trace (`seen`: ids so far, a duplicate is refused). */
function validTrace(r: unknown, i: number, source: string, seen: Set<string>): WekaTrace {
  const parsed = wekaTraceSchema.safeParse(r);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TraceFormatError(
      `${source}: trace #${i} is not a Weka trace: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
      {
        source,
        index: i,
      },
    );
  }
  if (seen.has(parsed.data.id))
    throw new TraceFormatError(`${source}: duplicate trace id ${parsed.data.id}`, { source });
  seen.add(parsed.data.id);
  return parsed.data;
}

/** The JSON values of trace text: one trace, an array, or JSONL. */
function rawTraces(text: string, source: string): unknown[] {
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
  return raw;
}

/** Work done between two yields to the event loop while loading traces, ms (heartbeats keep flowing). */
export const TRACE_SLICE_MS = 10;

/**
 * {@link loadTraces} without holding the event loop: files are read asynchronously, and JSONL lines
 * are parsed and validated in slices of {@link TRACE_SLICE_MS}, yielding between them, so every other
 * activity of the worker keeps heartbeating while a large trace set loads. (A single-JSON-document
 * file is parsed in one call; its validation is sliced.)
 */
export async function loadTracesAsync(path: string): Promise<WekaTrace[]> {
  const isDir = (await stat(path)).isDirectory();
  const files = isDir
    ? (await readdir(path))
        .filter((f) => f.endsWith('.json') || f.endsWith('.jsonl'))
        .sort()
        .map((f) => join(path, f))
    : [path];
  const all: WekaTrace[] = [];
  const seenAll = new Set<string>();
  for (const file of files) {
    const text = (await readFile(file, 'utf8')).trim();
    const jsonl = text !== '' && !text.startsWith('[') && !(text.startsWith('{') && !/\}\s*\n\s*\{/.test(text));
    const items: unknown[] = jsonl ? text.split('\n').filter((l) => l.trim() !== '') : rawTraces(text, file);
    const seen = new Set<string>();
    let sliceStart = performance.now();
    for (let i = 0; i < items.length; i++) {
      if (performance.now() - sliceStart > TRACE_SLICE_MS) {
        await yieldToLoop();
        sliceStart = performance.now();
      }
      let value = items[i];
      if (jsonl) {
        try {
          value = JSON.parse(value as string);
        } catch (err) {
          throw new TraceFormatError(`${file}: not JSON/JSONL: ${(err as Error).message}`, { source: file });
        }
      }
      const t = validTrace(value, i, file, seen);
      if (seenAll.has(t.id)) throw new TraceFormatError(`${path}: duplicate trace id ${t.id}`, { source: path });
      seenAll.add(t.id);
      all.push(t);
    }
  }
  if (all.length === 0 && isDir) throw new TraceFormatError(`${path}: no traces found`, { source: path });
  return all;
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
