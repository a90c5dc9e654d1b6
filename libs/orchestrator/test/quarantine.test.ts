import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileBackend, QuarantineStore, openQuarantine, quarantineHours } from '../src/quarantine';
import { quarantineContract } from '@infersweep/testkit/quarantine-contract';

describe('the worker quarantine in the data folder', () => {
  quarantineContract(async () => new QuarantineStore('local', new FileBackend(mkdtempSync(join(tmpdir(), 'q-'))), 24));

  it('is a JSON file per cluster under <INFERSWEEP_DATA>/quarantine unless the history store is PostgreSQL', async () => {
    const data = mkdtempSync(join(tmpdir(), 'q-data-'));
    const q = openQuarantine('local', { INFERSWEEP_DATA: data }, {});
    expect(q.where).toBe(join(data, 'quarantine'));
    await q.implicate({ class: 'node-health', rule: 'slurm-node-fail', sweepId: 's', nodes: ['node2'], step: 'now' });
    const doc = JSON.parse(readFileSync(join(data, 'quarantine', 'local.json'), 'utf8')) as { quarantined: object };
    expect(Object.keys(doc.quarantined)).toEqual(['node2']);
    expect(openQuarantine('local', { INFERSWEEP_DATA: data }, { store: join(data, 'history.jsonl') }).where).toBe(
      join(data, 'quarantine'),
    );
    const pgq = openQuarantine('local', {}, { store: 'postgresql://u:secret@db.example:5432/infersweep' });
    expect(pgq.where).toBe('postgresql://db.example:5432/infersweep');
    await pgq.close();
  });

  it('refuses a cluster name that is not a file name and a bad expiry setting', () => {
    expect(() => new QuarantineStore('../x', new FileBackend('/tmp'))).toThrow(/not a cluster name/);
    expect(quarantineHours({})).toBe(24);
    expect(quarantineHours({ INFERSWEEP_WORKER_QUARANTINE_HOURS: '6' })).toBe(6);
    expect(() => quarantineHours({ INFERSWEEP_WORKER_QUARANTINE_HOURS: '-1' })).toThrow(/positive number/);
  });
});
