/**
 * The worker's node quarantine in the production-shaped stack's PostgreSQL (scripts/stack-production.sh:
 * TLS with the stack's CA, verify-full): the same contract as the file in the data folder, in a
 * database of its own that the test creates and drops.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { openQuarantine } from '@infersweep/orchestrator';
import { quarantineContract } from '@infersweep/testkit/quarantine-contract';
import { prodPgDatabase } from './harness';

const db = prodPgDatabase('infersweep_quarantine');
let n = 0;
describe('the node quarantine in PostgreSQL (TLS, verify-full)', () => {
  beforeAll(() => db.create());
  afterAll(() => db.drop());
  // a cluster of its own per test: the contract's tests share the database
  quarantineContract(() => Promise.resolve(openQuarantine(`local${(n += 1)}`, {}, { store: db.url })));
});
