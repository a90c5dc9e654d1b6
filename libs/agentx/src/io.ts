import { mkdirSync, renameSync, writeFileSync, openSync, writeSync, closeSync, fsyncSync } from 'node:fs';
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

export function writeFileSyncDir(path: string, data: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
}
