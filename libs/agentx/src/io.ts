import { existsSync, mkdirSync, readFileSync, renameSync, openSync, writeSync, closeSync, fsyncSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Write a file atomically: temp file in the same directory, fsync, rename. */
export function writeFileAtomic(path: string, data: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`);
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** Write JSONL atomically (one JSON value per line). */
export function writeJsonlAtomic(path: string, rows: readonly unknown[]): void {
  const parts: string[] = [];
  for (const r of rows) parts.push(JSON.stringify(r));
  writeFileAtomic(path, parts.join('\n') + (parts.length ? '\n' : ''));
}

/**
 * Publish an attempt's folder by one rename: `staging` (complete) becomes `final`. A folder already
 * at `final` (an earlier attempt's published result) is moved aside first to
 * `<final>.superseded-<time>`, never deleted. Returns where the old one went, if anywhere.
 */
export function publishDir(staging: string, final: string): string | null {
  let aside: string | null = null;
  if (existsSync(final)) {
    aside = `${final}.superseded-${new Date().toISOString().replace(/[:.]/g, '')}`;
    renameSync(final, aside);
  }
  renameSync(staging, final);
  return aside;
}

export type StoredRecord<T> =
  | { kind: 'missing' }
  /** `ignored`: fields this version does not know (a newer writer's), left in the file, absent from `record`. */
  | { kind: 'ok'; record: T; ignored?: string[] }
  /** Valid JSON that is not a record of this schema (another version's): left in place, not used. */
  | { kind: 'unusable'; warning: string }
  /** Unreadable JSON: moved aside so it never blocks a resume. */
  | { kind: 'corrupt'; movedTo: string; warning: string };

interface ParseIssue {
  code?: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}
type SafeParser<T> = {
  safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: ParseIssue[] } };
};

/** `value` without the keys a strict schema reported as unrecognized (a copy; the keys' dotted paths in `dropped`). */
function withoutUnknownKeys(value: unknown, issues: readonly ParseIssue[], dropped: string[]): unknown {
  const copy = structuredClone(value);
  for (const i of issues) {
    if (i.code !== 'unrecognized_keys' || !i.keys) continue;
    let at: unknown = copy;
    for (const seg of i.path)
      at = at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[seg] : undefined;
    if (at === null || typeof at !== 'object') continue;
    for (const k of i.keys) {
      delete (at as Record<string, unknown>)[k];
      dropped.push([...i.path.map(String), k].join('.'));
    }
  }
  return copy;
}

/**
 * Read a stored record by its schema, tolerantly: the schemas are strict for writing, but a record a
 * newer version wrote (a field this version does not know) is read without those fields and left as
 * it is on disk; a record of another shape is left in place and not used (`unusable`, with a
 * warning); only unreadable JSON is renamed to `<file>.corrupt-<time>`.
 */
export function readRecordFile<T>(file: string, schema: SafeParser<T>): StoredRecord<T> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const movedTo = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '')}`;
    renameSync(file, movedTo);
    return {
      kind: 'corrupt',
      movedTo,
      warning: `corrupt record ${file} (not JSON: ${(err as Error).message}) moved aside to ${movedTo}`,
    };
  }
  let r = schema.safeParse(json);
  const ignored: string[] = [];
  // nested strict objects report their unknown keys once their parents pass: a few rounds at most
  for (let round = 0; !r.success && round < 8 && r.error.issues.some((i) => i.code === 'unrecognized_keys'); round++) {
    json = withoutUnknownKeys(json, r.error.issues, ignored);
    r = schema.safeParse(json);
  }
  if (r.success) return ignored.length > 0 ? { kind: 'ok', record: r.data, ignored } : { kind: 'ok', record: r.data };
  const why = r.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.')}: ${i.message}`)
    .join('; ');
  return {
    kind: 'unusable',
    warning: `record ${file} is not one this version reads (${why}); left in place, not reused`,
  };
}
