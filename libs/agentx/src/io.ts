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
  | { kind: 'ok'; record: T }
  /** Unreadable JSON or not a record of this schema: moved aside so it never blocks a resume. */
  | { kind: 'corrupt'; movedTo: string; warning: string };

/** Read a stored record by its schema; a corrupt one is renamed to `<file>.corrupt-<time>` with a warning. */
export function readRecordFile<T>(
  file: string,
  schema: {
    safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
): StoredRecord<T> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
  let why: string;
  try {
    const r = schema.safeParse(JSON.parse(text));
    if (r.success) return { kind: 'ok', record: r.data };
    why = r.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.map(String).join('.')}: ${i.message}`)
      .join('; ');
  } catch (err) {
    why = `not JSON: ${(err as Error).message}`;
  }
  const movedTo = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '')}`;
  renameSync(file, movedTo);
  return { kind: 'corrupt', movedTo, warning: `corrupt record ${file} (${why}) moved aside to ${movedTo}` };
}
