/**
 * The worker's node quarantine in the production-shaped stack's PostgreSQL (scripts/stack-production.sh:
 * TLS with the stack's CA, verify-full): the same contract as the file in the data folder, in a
 * database of its own that the test creates and drops.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { openQuarantine } from '../../libs/orchestrator/src/quarantine';
import { quarantineContract } from '../../libs/orchestrator/test/quarantine-contract';
import { prodEnv } from './harness';

const e = prodEnv();
const password = readFileSync(join(e.INFERSWEEP_PRODUCTION!, 'secrets', 'pg-temporal-password'), 'utf8').trim();
const db = `infersweep_quarantine_${randomUUID().slice(0, 8)}`;
const url = (database: string) =>
  `postgresql://temporal:${encodeURIComponent(password)}@127.0.0.1:${e.INFERSWEEP_PRODUCTION_PG_PORT}/${database}?sslmode=verify-full&sslrootcert=${encodeURIComponent(e.TEMPORAL_TLS_SERVER_CA_CERT_PATH!)}`;

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url('temporal') });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

let n = 0;
describe('the node quarantine in PostgreSQL (TLS, verify-full)', () => {
  beforeAll(() => admin(`CREATE DATABASE ${db}`));
  afterAll(() => admin(`DROP DATABASE IF EXISTS ${db}`));
  // a cluster of its own per test: the database is shared by the contract's tests
  quarantineContract(() => Promise.resolve(openQuarantine(`local${(n += 1)}`, {}, { store: url(db) })));
});
