/**
 * Where the history lives. One interface (`HistoryStore`, ./schema.ts), two stores: a JSON-lines
 * file under the results root (the embedded default; Node 20 has no built-in SQLite) and PostgreSQL
 * (./pg-store.ts, the database the production-shaped stack runs). Both keep whole runs: writing a run
 * again replaces it, so a retried activity or a rebuild never counts a point twice. Nothing deletes runs it was not
 * given: a rebuild replaces the runs it found, and every other run (another results root sharing the
 * store) stays.
 */
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import {
  HistoryFormatError,
  historyPointSchema,
  olderFormat,
  seriesId,
  type HistoryPoint,
  type HistoryStore,
  type SeriesKey,
  type StoredRun,
} from './schema';

/** The file store's name under a results root. */
export const HISTORY_FILE = '.infersweep-history.jsonl';

const runLineSchema = z.object({ runId: z.string().min(1), points: z.array(historyPointSchema) }).strict();

/** One stored line: its run when it validates. */
function parseLine(line: string): z.infer<typeof runLineSchema> | undefined {
  try {
    const parsed = runLineSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Why a whole line (valid JSON of a run) is of an older format, when it is. */
function olderLine(line: string): string | undefined {
  try {
    const raw = JSON.parse(line) as { points?: unknown };
    return Array.isArray(raw.points) ? raw.points.map(olderFormat).find((x) => x !== undefined) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a non-empty file's last byte is not a newline (a torn append: a crash, a full disk, an NFS client). */
function endsTorn(file: string): boolean {
  if (!existsSync(file)) return false;
  const size = statSync(file).size;
  if (size === 0) return false;
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, size - 1);
    return b[0] !== 0x0a;
  } finally {
    closeSync(fd);
  }
}

/**
 * A JSON-lines file: one line per stored run (`{runId, points}`); a later line of the same run
 * replaces an earlier one. Appends are single writes of one line, preceded by a newline when the file
 * does not end in one, so a torn last line never glues to the next run; `replaceRuns` writes a new file
 * and renames it into place. Lines that do not validate are counted in `skippedLines` and never used;
 * `replaceRuns` drops them.
 */
export class FileHistoryStore implements HistoryStore {
  skippedLines = 0;

  constructor(readonly file: string) {}

  get where(): string {
    return this.file;
  }

  private lines(): string[] {
    return existsSync(this.file) ? readFileSync(this.file, 'utf8').split('\n') : [];
  }

  /** An older format (series keys without cluster, client, workload) is a {@link HistoryFormatError}, not a torn line. */
  private load(): Map<string, HistoryPoint[]> {
    const runs = new Map<string, HistoryPoint[]>();
    this.skippedLines = 0;
    for (const line of this.lines()) {
      if (line.trim() === '') continue;
      const run = parseLine(line);
      if (run === undefined) {
        const old = olderLine(line);
        if (old) throw new HistoryFormatError(this.file, old);
        this.skippedLines++;
        continue;
      }
      runs.delete(run.runId); // re-insert: insertion order follows the latest write
      runs.set(run.runId, run.points);
    }
    return runs;
  }

  async putRun(runId: string, points: readonly HistoryPoint[]): Promise<void> {
    mkdirSync(dirname(this.file), { recursive: true });
    appendFileSync(this.file, `${endsTorn(this.file) ? '\n' : ''}${JSON.stringify({ runId, points })}\n`);
  }

  /** Also drops the lines that do not validate (counted in `skippedLines`): no one can read them. */
  async replaceRuns(runs: readonly StoredRun[]): Promise<void> {
    const replaced = new Set(runs.map((r) => r.runId));
    const lines = this.lines().filter((line) => line.trim() !== '');
    const valid = lines.filter((line) => parseLine(line) !== undefined);
    this.skippedLines = lines.length - valid.length;
    const kept = valid.filter((line) => !replaced.has(parseLine(line)!.runId));
    const added = runs.map((r) => JSON.stringify({ runId: r.runId, points: r.points }));
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp-${process.pid}`;
    writeFileSync(tmp, [...kept, ...added].map((l) => `${l}\n`).join(''));
    renameSync(tmp, this.file);
  }

  async series(key: SeriesKey): Promise<HistoryPoint[]> {
    const id = seriesId(key);
    return [...this.load().values()].flat().filter((p) => seriesId(p.key) === id);
  }

  async run(runId: string): Promise<HistoryPoint[]> {
    return this.load().get(runId) ?? [];
  }

  async seriesKeys(): Promise<SeriesKey[]> {
    const out = new Map<string, SeriesKey>();
    for (const p of [...this.load().values()].flat()) out.set(seriesId(p.key), p.key);
    return [...out.values()];
  }

  async close(): Promise<void> {}
}

/**
 * The store a location names: `postgres://…` / `postgresql://…` (./pg-store.ts), else a file path
 * (a directory gets {@link HISTORY_FILE} inside it).
 */
export async function openStore(location: string): Promise<HistoryStore> {
  if (/^postgres(ql)?:\/\//.test(location)) {
    const { PgHistoryStore } = await import('./pg-store');
    return PgHistoryStore.connect(location);
  }
  const file = location.endsWith('.jsonl') ? location : join(location, HISTORY_FILE);
  return new FileHistoryStore(file);
}
