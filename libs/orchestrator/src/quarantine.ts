/**
 * The worker's node quarantine: nodes a failed attempt implicated (libs/core/src/attempt-class.ts)
 * are kept out of the cluster's next allocations (`salloc --exclude`, ./activities/allocation.ts)
 * until they expire or an operator clears them (`infersweep nodes`). A node-class failure
 * quarantines at once; other suspicions are strikes, and two strikes within the expiry window
 * quarantine (libs/sweep/src/attempt-decision.ts). Worker-owned: one JSON file per cluster in the
 * worker's data folder (`<INFERSWEEP_DATA>/quarantine/<cluster>.json`), written under a lock file
 * and renamed into place, so the worker and the CLI on its host never lose each other's changes; or,
 * when the worker's history store is PostgreSQL, a row per cluster there ({@link openQuarantine}).
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { z } from 'zod';
import { ATTEMPT_CLASSES, dataDirOf } from '@infersweep/core';
import { loadHistorySettings, type HistorySettings } from '@infersweep/history';
import { quarantinedBy, type QuarantineStep } from '@infersweep/sweep';

/** How long a quarantine (and a strike) lasts unless cleared: `INFERSWEEP_WORKER_QUARANTINE_HOURS`, default 24. */
const QUARANTINE_HOURS_ENV = 'INFERSWEEP_WORKER_QUARANTINE_HOURS';
const DEFAULT_HOURS = 24;

const suspicionSchema = z.object({
  at: z.string(),
  class: z.enum(ATTEMPT_CLASSES),
  rule: z.string(),
  evidence: z.string().optional(),
  sweepId: z.string(),
  jobId: z.string().optional(),
});
const entrySchema = suspicionSchema.extend({ until: z.string(), strikes: z.number().int().positive() });
const fileSchema = z.object({
  quarantined: z.record(z.string(), entrySchema).default({}),
  strikes: z.record(z.string(), z.array(suspicionSchema)).default({}),
});
export type QuarantineEntry = z.infer<typeof entrySchema> & { node: string };
type Suspicion = z.infer<typeof suspicionSchema>;
export type QuarantineFile = z.infer<typeof fileSchema>;

export interface Implication extends Omit<Suspicion, 'at'> {
  nodes: string[];
  step: QuarantineStep;
}

/**
 * Apply one failure's implication to a quarantine (pure): strikes older than the window are
 * forgotten, each node gets its strike, and a node quarantined by the rule is entered with an expiry.
 * Returns the nodes this implication quarantined (already quarantined ones included).
 */
export function implicate(q: QuarantineFile, i: Implication, now: Date, hours: number): string[] {
  const at = now.toISOString();
  const windowStart = now.getTime() - hours * 3_600_000;
  const out: string[] = [];
  for (const node of i.nodes) {
    if (i.step === 'none') continue;
    const { nodes: _n, step: _s, ...why } = i;
    const strikes = [...(q.strikes[node] ?? []).filter((s) => Date.parse(s.at) >= windowStart), { ...why, at }];
    q.strikes[node] = strikes;
    if (!quarantinedBy(i.step, strikes.length) && !active(q, node, now)) continue;
    q.quarantined[node] = {
      ...why,
      at,
      until: new Date(now.getTime() + hours * 3_600_000).toISOString(),
      strikes: strikes.length,
    };
    out.push(node);
  }
  return out;
}

const active = (q: QuarantineFile, node: string, now: Date): boolean => {
  const e = q.quarantined[node];
  return !!e && Date.parse(e.until) > now.getTime();
};

/**
 * Where a quarantine document lives: a file per cluster in the worker's data folder (the embedded
 * default), or a row per cluster in PostgreSQL when the worker's history store is PostgreSQL
 * (`INFERSWEEP_HISTORY_SETTINGS` `store: postgresql://…`, libs/history), so every worker of a team
 * shares one quarantine. `update` reads, changes and writes one cluster's document atomically.
 */
interface QuarantineBackend {
  readonly where: string;
  read(cluster: string): Promise<QuarantineFile>;
  update<T>(cluster: string, change: (q: QuarantineFile) => T): Promise<T>;
  close(): Promise<void>;
}

/** The quarantine of one cluster: the nodes quarantined now, implicating nodes, clearing them. */
export class QuarantineStore {
  constructor(
    readonly cluster: string,
    private readonly backend: QuarantineBackend,
    readonly hours = quarantineHours(process.env),
  ) {
    if (!/^[A-Za-z0-9._-]+$/.test(cluster)) throw new TypeError(`not a cluster name: ${JSON.stringify(cluster)}`);
  }

  /** Where the quarantine is (a file path, or PostgreSQL's host and database: never credentials). */
  get where(): string {
    return this.backend.where;
  }

  /** The nodes quarantined now (expired entries are left out), by node name. */
  async list(now = new Date()): Promise<QuarantineEntry[]> {
    const q = await this.backend.read(this.cluster);
    return Object.entries(q.quarantined)
      .filter(([node]) => active(q, node, now))
      .map(([node, e]) => ({ node, ...e }))
      .sort((a, b) => a.node.localeCompare(b.node));
  }

  /** Record a failure's implication; the nodes it quarantined. */
  implicate(i: Implication, now = new Date()): Promise<string[]> {
    return this.backend.update(this.cluster, (q) => implicate(q, i, now, this.hours));
  }

  /** Clear nodes (or every node: `all`) of their quarantine and strikes; the nodes cleared. */
  clear(nodes: string[] | 'all'): Promise<string[]> {
    return this.backend.update(this.cluster, (q) => {
      const names = nodes === 'all' ? [...new Set([...Object.keys(q.quarantined), ...Object.keys(q.strikes)])] : nodes;
      const cleared = names.filter((n) => q.quarantined[n] !== undefined || q.strikes[n] !== undefined);
      for (const n of names) {
        delete q.quarantined[n];
        delete q.strikes[n];
      }
      return cleared.sort();
    });
  }

  close(): Promise<void> {
    return this.backend.close();
  }
}

/**
 * The worker's quarantine of a cluster: PostgreSQL when its history store is (the production store),
 * else the file in its data folder. Close it after use.
 */
export function openQuarantine(
  cluster: string,
  env: Record<string, string | undefined> = process.env,
  settings: Pick<HistorySettings, 'store'> = loadHistorySettings(),
): QuarantineStore {
  const backend = settings.store?.startsWith('postgres')
    ? new PgBackend(settings.store)
    : new FileBackend(join(dataDirOf(env), 'quarantine'));
  return new QuarantineStore(cluster, backend, quarantineHours(env));
}

/** One JSON file per cluster, written under a lock file and renamed into place. */
export class FileBackend implements QuarantineBackend {
  constructor(readonly where: string) {}

  fileOf(cluster: string): string {
    return join(this.where, `${cluster}.json`);
  }

  read(cluster: string): Promise<QuarantineFile> {
    return Promise.resolve(this.readNow(cluster));
  }

  private readNow(cluster: string): QuarantineFile {
    const file = this.fileOf(cluster);
    if (!existsSync(file)) return fileSchema.parse({});
    return fileSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  }

  /** Read, change and write back under the lock file (a stale lock, older than 30 s, is taken over). */
  async update<T>(cluster: string, change: (q: QuarantineFile) => T): Promise<T> {
    mkdirSync(this.where, { recursive: true });
    const file = this.fileOf(cluster);
    const lock = `${file}.lock`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        closeSync(openSync(lock, 'wx'));
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        if (Date.now() - mtimeMs(lock) > 30_000) rmSync(lock, { force: true });
        else if (Date.now() > deadline) throw new Error(`quarantine ${file} locked for 10 s (${lock})`);
        else await new Promise((r) => setTimeout(r, 50));
      }
    }
    try {
      const q = this.readNow(cluster);
      const r = change(q);
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(q, null, 2)}\n`);
      renameSync(tmp, file);
      return r;
    } finally {
      rmSync(lock, { force: true });
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

const TABLE = 'infersweep_quarantine';

/** One row per cluster, the document as validated JSON, changed under `SELECT … FOR UPDATE`. */
class PgBackend implements QuarantineBackend {
  readonly where: string;
  private readonly pool: pg.Pool;
  private ready?: Promise<unknown>;

  constructor(url: string) {
    const u = new URL(url);
    this.where = `postgresql://${u.host}${u.pathname}`;
    this.pool = new pg.Pool({ connectionString: url, max: 2 });
  }

  private table(): Promise<unknown> {
    this.ready ??= this.pool.query(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (cluster text PRIMARY KEY, doc jsonb NOT NULL)`,
    );
    return this.ready;
  }

  async read(cluster: string): Promise<QuarantineFile> {
    await this.table();
    const r = await this.pool.query<{ doc: unknown }>(`SELECT doc FROM ${TABLE} WHERE cluster = $1`, [cluster]);
    return fileSchema.parse(r.rows[0]?.doc ?? {});
  }

  async update<T>(cluster: string, change: (q: QuarantineFile) => T): Promise<T> {
    await this.table();
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query(`INSERT INTO ${TABLE} (cluster, doc) VALUES ($1, '{}') ON CONFLICT (cluster) DO NOTHING`, [
        cluster,
      ]);
      const r = await c.query<{ doc: unknown }>(`SELECT doc FROM ${TABLE} WHERE cluster = $1 FOR UPDATE`, [cluster]);
      const q = fileSchema.parse(r.rows[0]?.doc ?? {});
      const out = change(q);
      await c.query(`UPDATE ${TABLE} SET doc = $2 WHERE cluster = $1`, [cluster, JSON.stringify(q)]);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

export function quarantineHours(env: Record<string, string | undefined>): number {
  const v = env[QUARANTINE_HOURS_ENV];
  if (v === undefined || v === '') return DEFAULT_HOURS;
  const h = Number(v);
  if (!Number.isFinite(h) || h <= 0)
    throw new TypeError(`${QUARANTINE_HOURS_ENV}=${v}: give the hours a quarantine lasts, a positive number`);
  return h;
}
