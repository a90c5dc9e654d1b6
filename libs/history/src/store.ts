/**
 * Where the history lives. One interface (`HistoryStore`, ./schema.ts), two stores: a JSON-lines
 * file under the results root (the embedded default; Node 20 has no built-in SQLite) and PostgreSQL
 * (./pg-store.ts, the database the production-shaped stack runs). Both keep whole runs: writing a run
 * again replaces it, so a retried activity or a rebuild never counts a point twice.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { historyPointSchema, seriesId, type HistoryPoint, type HistoryStore, type SeriesKey } from './schema';

/** The file store's name under a results root. */
export const HISTORY_FILE = '.infersweep-history.jsonl';

const runLineSchema = z.object({ runId: z.string().min(1), points: z.array(historyPointSchema) }).strict();

/**
 * A JSON-lines file: one line per stored run (`{runId, points}`); a later line of the same run
 * replaces an earlier one. Appends are single writes of one line; `clear` writes a fresh file and
 * renames it into place. Lines that do not validate are counted in `skippedLines`, never used.
 */
export class FileHistoryStore implements HistoryStore {
  skippedLines = 0;

  constructor(readonly file: string) {}

  get where(): string {
    return this.file;
  }

  private load(): Map<string, HistoryPoint[]> {
    const runs = new Map<string, HistoryPoint[]>();
    this.skippedLines = 0;
    if (!existsSync(this.file)) return runs;
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      let parsed: z.ZodSafeParseResult<z.infer<typeof runLineSchema>>;
      try {
        parsed = runLineSchema.safeParse(JSON.parse(line));
      } catch {
        this.skippedLines++;
        continue;
      }
      if (!parsed.success) {
        this.skippedLines++;
        continue;
      }
      runs.delete(parsed.data.runId); // re-insert: insertion order follows the latest write
      runs.set(parsed.data.runId, parsed.data.points);
    }
    return runs;
  }

  async putRun(runId: string, points: readonly HistoryPoint[]): Promise<void> {
    mkdirSync(dirname(this.file), { recursive: true });
    appendFileSync(this.file, `${JSON.stringify({ runId, points })}\n`);
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

  async clear(): Promise<void> {
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp-${process.pid}`;
    writeFileSync(tmp, '');
    renameSync(tmp, this.file);
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
