/**
 * The history in the production-shaped stack's PostgreSQL (scripts/stack-production.sh: TLS with
 * the stack's CA, verify-full, scram password): the same store contract as the file store, in a
 * database of its own that the test creates and drops.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { openStore } from '@infersweep/history';
import { storeContract } from '@infersweep/testkit/store-contract';
import { prodPgDatabase } from './harness';

const db = prodPgDatabase('infersweep_history');

describe('the PostgreSQL history store (TLS, verify-full)', () => {
  beforeAll(() => db.create());
  afterAll(() => db.drop());
  storeContract(() => openStore(db.url));
});
