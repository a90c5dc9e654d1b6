/**
 * The history in PostgreSQL (the database of the production-shaped stack, scripts/stack-production.sh):
 * one row per point, keyed by run and series, the point itself as validated JSON. TLS and credentials
 * come from the connection URL (`sslmode`, `sslrootcert`, …) that the worker's settings name; the URL
 * is never logged ({@link PgHistoryStore.where} shows host and database only).
 */
import pg from 'pg';
import {
  HistoryFormatError,
  historyPointSchema,
  olderFormat,
  seriesId,
  seriesKeySchema,
  type HistoryPoint,
  type HistoryStore,
  type SeriesKey,
  type StoredRun,
} from './schema';

const TABLE = 'infersweep_history_points';

/** How a team database in the older format is rewritten: every root that writes into it rebuilt, the rest deleted. */
const PG_FIX = `rebuild every results root that writes into it (\`infersweep history rebuild --root <results root> --store <url>\`), then delete the rows whose results folders are gone: \`DELETE FROM ${TABLE} WHERE NOT (point->'key' ? 'workload')\``;

const DDL = `CREATE TABLE IF NOT EXISTS ${TABLE} (
  run_id text NOT NULL,
  series text NOT NULL,
  run_time timestamptz NOT NULL,
  point jsonb NOT NULL,
  PRIMARY KEY (run_id, series)
);
CREATE INDEX IF NOT EXISTS ${TABLE}_series_time ON ${TABLE} (series, run_time)`;

export class PgHistoryStore implements HistoryStore {
  private constructor(
    private readonly pool: pg.Pool,
    readonly where: string,
  ) {}

  static async connect(url: string): Promise<PgHistoryStore> {
    const u = new URL(url);
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const store = new PgHistoryStore(pool, `postgresql://${u.host}${u.pathname}`);
    await pool.query(DDL);
    return store;
  }

  /** PostgreSQL keeps no lines that fail to validate: a row is validated when it is written. */
  readonly skippedLines = 0;

  putRun(runId: string, points: readonly HistoryPoint[]): Promise<void> {
    return this.replaceRuns([{ runId, points }]);
  }

  /** One transaction: delete the named runs' rows, insert their points; other runs' rows are never touched. */
  async replaceRuns(runs: readonly StoredRun[]): Promise<void> {
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query(`DELETE FROM ${TABLE} WHERE run_id = ANY($1::text[])`, [runs.map((r) => r.runId)]);
      for (const r of runs)
        for (const p of r.points)
          await c.query(`INSERT INTO ${TABLE} (run_id, series, run_time, point) VALUES ($1, $2, $3, $4)`, [
            r.runId,
            seriesId(p.key),
            p.time,
            JSON.stringify(historyPointSchema.parse(p)),
          ]);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  private async points(where: string, args: unknown[]): Promise<HistoryPoint[]> {
    const r = await this.pool.query<{ point: unknown }>(
      `SELECT point FROM ${TABLE} ${where} ORDER BY run_time, run_id`,
      args,
    );
    return r.rows.map((row) => {
      const old = olderFormat(row.point);
      if (old) throw new HistoryFormatError(this.where, old, PG_FIX);
      return historyPointSchema.parse(row.point);
    });
  }

  series(key: SeriesKey): Promise<HistoryPoint[]> {
    return this.points('WHERE series = $1', [seriesId(key)]);
  }

  run(runId: string): Promise<HistoryPoint[]> {
    return this.points('WHERE run_id = $1', [runId]);
  }

  async seriesKeys(): Promise<SeriesKey[]> {
    const r = await this.pool.query<{ key: unknown }>(
      `SELECT DISTINCT ON (series) point->'key' AS key FROM ${TABLE} ORDER BY series`,
    );
    return r.rows.map((row) => {
      const old = olderFormat({ key: row.key });
      if (old) throw new HistoryFormatError(this.where, old, PG_FIX);
      return seriesKeySchema.parse(row.key);
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
