import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '@infersweep/core';
import { planSweep } from '@infersweep/topology';
import { loadSweepConfig } from '../src/config-file';
import {
  COMPLETING_PATIENCE_ENV,
  WorkerSettingsError,
  completingPatienceMs,
  loadWorkerSettings,
  type WorkerSettings,
} from '../src/worker-settings';
import { RefusedInputError, assertAllowed, assertHostReady, isUnder, refusals } from '../src/activities/input-checks';

const plan = () => {
  const loaded = loadSweepConfig({
    clusters: ['local'],
    env: { HOME: '/home/u', INFERSWEEP_STACK: '/stack', INFERSWEEP_DATA: '/nonexistent-data' },
  });
  return planSweep(loaded.config, { orientation: 'latency', cluster: 'local', points: [1], source: loaded.source });
};

const settings = (over: Partial<WorkerSettings> = {}): WorkerSettings => ({
  clusters: ['local'],
  secretNames: ['HF_TOKEN'],
  secretsFiles: ['/etc/infersweep/h200.secrets'],
  aiperfBinaries: ['aiperf'],
  resultsRoots: ['/shared/results'],
  ...over,
});

describe('worker settings (read once at worker start)', () => {
  it('defaults: the cluster served, no secrets, the data dir as results root', () => {
    const s = loadWorkerSettings('h200', { INFERSWEEP_DATA: '/data/infersweep/' });
    expect(s.clusters).toEqual(['h200']);
    expect(s.secretNames).toEqual([]);
    expect(s.secretsFiles).toEqual([]);
    expect(s.resultsRoots).toEqual(['/data/infersweep']);
    expect(s.aiperfBinaries[0]).toBe('aiperf');
  });

  it('environment variables: comma lists', () => {
    const s = loadWorkerSettings('local', {
      INFERSWEEP_WORKER_CLUSTERS: 'h200, local',
      INFERSWEEP_WORKER_SECRETS: 'HF_TOKEN,WANDB_KEY',
      INFERSWEEP_WORKER_RESULTS_ROOTS: '/lustre/results/',
    });
    expect(s).toMatchObject({
      clusters: ['h200', 'local'],
      secretNames: ['HF_TOKEN', 'WANDB_KEY'],
      resultsRoots: ['/lustre/results'],
    });
  });

  it('the COMPLETING patience: seconds from its variable, unset keeps the default, a bad value names variable, value and range', () => {
    expect(completingPatienceMs({})).toBeUndefined();
    expect(completingPatienceMs({ [COMPLETING_PATIENCE_ENV]: '90' })).toBe(90_000);
    expect(completingPatienceMs({ [COMPLETING_PATIENCE_ENV]: '0.5' })).toBe(500);
    for (const bad of ['0', '-5', 'ten', '900'])
      expect(() => completingPatienceMs({ [COMPLETING_PATIENCE_ENV]: bad })).toThrow(
        new RegExp(`${COMPLETING_PATIENCE_ENV}="${bad}": give seconds, more than 0 and at most 840`),
      );
  });

  it('a malformed setting stops the worker with an error naming the setting', () => {
    expect(() => loadWorkerSettings('local', { INFERSWEEP_WORKER_RESULTS_ROOTS: 'results' })).toThrow(
      /INFERSWEEP_WORKER_RESULTS_ROOTS \(item 0\): must be an absolute path/,
    );
    expect(() => loadWorkerSettings('local', { INFERSWEEP_WORKER_SECRETS: 'HF-TOKEN' })).toThrow(WorkerSettingsError);
  });

  it('a settings file replaces the variables; an unknown key is refused by name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'worker-settings-'));
    const file = join(dir, 'worker.json');
    writeFileSync(file, JSON.stringify({ secretNames: ['HF_TOKEN'], resultsRoots: ['/r'] }));
    const s = loadWorkerSettings('local', { INFERSWEEP_WORKER_SETTINGS: file, INFERSWEEP_WORKER_SECRETS: 'IGNORED' });
    expect(s.secretNames).toEqual(['HF_TOKEN']);
    expect(s.resultsRoots).toEqual(['/r']);
    writeFileSync(file, JSON.stringify({ secretNames: [], binaries: ['x'] }));
    expect(() => loadWorkerSettings('local', { INFERSWEEP_WORKER_SETTINGS: file })).toThrow(/binaries/);
  });
});

describe('a sweep input asks only what the worker allows', () => {
  it('an allowed input passes', () => {
    const p = plan();
    p.secretEnv = ['HF_TOKEN'];
    expect(refusals(p, '/shared/results/sweep-1', settings())).toEqual([]);
  });

  it('each foreign ask is refused, naming the field, the value and the setting', () => {
    const p = plan();
    p.secretEnv = ['HF_TOKEN', 'TEMPORAL_API_KEY'];
    p.secretsFile = '/home/worker/.ssh/id_ed25519';
    p.agentx.client = 'aiperf';
    p.agentx.aiperf.binary = '/tmp/evil';
    const found = refusals(p, '/shared/results/../../etc', settings({ clusters: ['h200'] }));
    expect(found).toEqual([
      { field: 'plan.cluster', value: 'local', setting: 'clusters' },
      { field: 'plan.secretEnv', value: 'TEMPORAL_API_KEY', setting: 'secretNames' },
      { field: 'plan.secretsFile', value: '/home/worker/.ssh/id_ed25519', setting: 'secretsFiles' },
      { field: 'plan.agentx.aiperf.binary', value: '/tmp/evil', setting: 'aiperfBinaries' },
      { field: 'resultsDir', value: '/shared/results/../../etc', setting: 'resultsRoots' },
    ]);
    let err: unknown;
    try {
      assertAllowed(p, '/x', settings(), {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RefusedInputError);
    expect(err).toBeInstanceOf(InputError); // non-retryable, input: the workflow fails the sweep at once
    expect((err as Error).message).toContain(
      'plan.secretEnv = "TEMPORAL_API_KEY" is not allowed by this worker: INFERSWEEP_WORKER_SECRETS allows "HF_TOKEN"',
    );
  });

  it('the aiperf binary is checked only when aiperf runs the points', () => {
    const p = plan();
    p.agentx.aiperf.binary = '/tmp/evil';
    expect(refusals(p, '/shared/results/x', settings())).toEqual([]);
  });

  it('a results folder escaping its root through a symlink is refused', () => {
    const root = mkdtempSync(join(tmpdir(), 'results-root-'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'elsewhere-'));
    mkdirSync(join(root, 'ok'));
    symlinkSync(elsewhere, join(root, 'link'));
    expect(isUnder(join(root, 'ok', 'new', 'sweep'), root)).toBe(true);
    expect(isUnder(root, root)).toBe(true);
    expect(isUnder(join(root, 'link', 'sweep'), root)).toBe(false);
    expect(isUnder(`${root}-sibling/x`, root)).toBe(false);
    expect(isUnder('relative/x', root)).toBe(false);
  });
});

describe("prepareSweep checks the login files and the secrets on the worker's own host", () => {
  it('a key missing on this host, a secret missing here: an input error naming each, before any allocation', () => {
    const p = plan();
    const home = mkdtempSync(join(tmpdir(), 'worker-home-'));
    p.login = {
      host: 'login.example',
      port: 22,
      user: 'u',
      keyPath: join(home, 'id_ed25519'),
      knownHostsPath: join(home, 'known_hosts'),
    };
    writeFileSync(join(home, 'known_hosts'), 'login.example ssh-ed25519 AAAA\n');
    expect(() => assertHostReady(p)).toThrow(
      /on this worker's host: plan\.login\.loginHost\.keyPath = .*id_ed25519.*does not exist/,
    );
    writeFileSync(join(home, 'id_ed25519'), 'k\n', { mode: 0o600 });
    p.secretEnv = ['INFERSWEEP_TEST_SECRET_NOT_HERE'];
    expect(() => assertHostReady(p)).toThrow(InputError);
    expect(() => assertHostReady(p)).toThrow(/INFERSWEEP_TEST_SECRET_NOT_HERE not found on the worker/);
    p.secretEnv = [];
    expect(() => assertHostReady(p)).not.toThrow();
  });
});
