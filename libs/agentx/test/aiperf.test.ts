import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentxSettingsSchema } from '@infersweep/topology';
import {
  aiperfProcessEnv,
  aiperfToRecords,
  buildAiperfArgv,
  runAiperfPoint,
  localAiperfRunner,
  parseAiperfJsonl,
  parseTimes,
  wrapperExitCode,
} from '@infersweep/agentx';
import { shellJoin } from '@infersweep/core';

const reference = {
  urls: ['http://10.0.0.1:8000'],
  servedModel: 'kimi-k3',
  tokenizer: 'moonshotai/Kimi-K3',
  // InferenceX passes --tokenizer-trust-remote-code always; infersweep only for a tokenizer the worker trusts
  trustRemoteCode: true,
  concurrency: 16,
  metricsEndpoints: ['http://10.0.0.1:8000/metrics', 'http://10.0.0.2:8000/metrics'],
  artifactDir: '/logs/agentic/conc_16/aiperf_artifacts',
  dataset: { kind: 'public' as const, loader: 'semianalysis_cc_traces_weka_062126_256k', entries: 393 },
};

/**
 * The flags and values InferenceX's `build_replay_cmd` passes to `aiperf profile` for `reference`:
 * facts read from InferenceX benchmarks/benchmark_lib.sh at 843c6254ff69b567f772f6a5fd97675af3d04431
 * (build_replay_cmd, and the defaults it reads: AIPERF_FAILED_REQUEST_THRESHOLD 0.10 as the live
 * threshold, AIPERF_TRACE_IDLE_GAP_CAP_SECONDS 300, AIPERF_WARMUP_REQUESTS_PER_LANE 10,
 * AGENTIC_WARMUP_GRACE_PERIOD 1800), with DURATION=3600, CONC=16, SERVED_MODEL_NAME=kimi-k3,
 * MODEL=moonshotai/Kimi-K3, AIPERF_SERVER_URL and AIPERF_SERVER_METRICS_URLS as in `reference`, the
 * public Weka loader, and neither MAX_MODEL_LEN, AIPERF_EXTRA_INPUTS nor a dynamo-* FRAMEWORK set
 * (each of those adds a flag there). Written out by hand from that file, not from our builder.
 */
const inferencexReplayFlags: Record<string, string[]> = {
  '--scenario': ['inferencex-agentx-mvp'],
  '--url': ['http://10.0.0.1:8000'],
  '--endpoint': ['/v1/chat/completions'],
  '--endpoint-type': ['chat'],
  '--streaming': [],
  '--model': ['kimi-k3'],
  '--tokenizer': ['moonshotai/Kimi-K3'],
  '--concurrency': ['16'],
  '--benchmark-duration': ['3600'],
  '--stats-interval': ['30'],
  '--random-seed': ['42'],
  '--failed-request-threshold': ['0.1'],
  '--trajectory-start-min-ratio': ['0.25'],
  '--trajectory-start-max-ratio': ['0.75'],
  '--warmup-requests-per-lane': ['10'],
  '--trace-idle-gap-cap-seconds': ['300'],
  '--warmup-grace-period': ['1800'],
  '--use-server-token-count': [],
  '--no-gpu-telemetry': [],
  '--tokenizer-trust-remote-code': [],
  '--num-dataset-entries': ['393'],
  '--slice-duration': ['1'],
  '--server-metrics': ['http://10.0.0.1:8000/metrics', 'http://10.0.0.2:8000/metrics'],
  '--output-artifact-dir': ['/logs/agentic/conc_16/aiperf_artifacts'],
  '--public-dataset': ['semianalysis_cc_traces_weka_062126_256k'],
};

/** `--flag v1 v2 --other` → { '--flag': ['v1', 'v2'], '--other': [] }; numbers normalised (0.10 = 0.1); a repeated flag fails. */
function flagsOf(argv: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let cur: string[] | undefined;
  for (const a of argv) {
    if (a.startsWith('--')) {
      if (a in out) throw new Error(`${a} given twice`);
      cur = out[a] = [];
    } else if (cur === undefined) throw new Error(`${a} before any flag`);
    else cur.push(a !== '' && Number.isFinite(Number(a)) ? String(Number(a)) : a);
  }
  return out;
}

describe('buildAiperfArgv', () => {
  it('reproduces the InferenceX build_replay_cmd flag set for a reference config', () => {
    const argv = buildAiperfArgv({ ...reference, settings: agentxSettingsSchema.parse({}) });
    expect(argv[0]).toBe('profile');
    expect(flagsOf(argv.slice(1))).toEqual(inferencexReplayFlags);
  });
  it('adds --unsafe-override iff duration < 900 s (or explicitly asked)', () => {
    const short = buildAiperfArgv({
      ...reference,
      settings: agentxSettingsSchema.parse({ profileDurationSeconds: 600, nonCanonical: true }),
    });
    expect(short).toContain('--unsafe-override');
    const canon = buildAiperfArgv({
      ...reference,
      settings: agentxSettingsSchema.parse({ profileDurationSeconds: 900 }),
    });
    expect(canon).not.toContain('--unsafe-override');
    expect(buildAiperfArgv({ ...reference, unsafeOverride: true, settings: agentxSettingsSchema.parse({}) })).toContain(
      '--unsafe-override',
    );
  });
  it('never lets the tokenizer run its own code unless the worker trusts it (trustRemoteCode)', () => {
    const settings = agentxSettingsSchema.parse({});
    const { trustRemoteCode: _trusted, ...untrusted } = reference;
    expect(buildAiperfArgv({ ...untrusted, settings })).not.toContain('--tokenizer-trust-remote-code');
    expect(buildAiperfArgv({ ...reference, trustRemoteCode: false, settings })).not.toContain(
      '--tokenizer-trust-remote-code',
    );
    expect(buildAiperfArgv({ ...reference, settings })).toContain('--tokenizer-trust-remote-code');
  });
  it('pypi flavour drops fork-only flags and uses a local Weka directory', () => {
    const argv = buildAiperfArgv({
      ...reference,
      tokenizer: 'builtin',
      dataset: { kind: 'file', path: '/data/traces', entries: 8 },
      settings: agentxSettingsSchema.parse({ aiperf: { flavor: 'pypi' }, profileDurationSeconds: 900 }),
    });
    expect(argv).not.toContain('--warmup-requests-per-lane');
    expect(argv).toContain('--agentic-warmup-grace-period');
    expect(argv.join(' ')).toContain('--custom-dataset-type weka_trace --input-file /data/traces');
    expect(argv).toContain('--unsafe-override');
    expect(argv).not.toContain('--tokenizer-trust-remote-code');
  });
  it('passes --max-context-length as InferenceX does: the served context when set and not 0', () => {
    // InferenceX benchmarks/benchmark_lib.sh @ 843c6254ff69b567f772f6a5fd97675af3d04431, build_replay_cmd:
    // `if [ -n "${MAX_MODEL_LEN:-}" ] && [ "$MAX_MODEL_LEN" != "0" ]; then REPLAY_CMD+=" --max-context-length $MAX_MODEL_LEN"`,
    // placed after --tokenizer-trust-remote-code and before --num-dataset-entries
    const settings = agentxSettingsSchema.parse({});
    const argv = buildAiperfArgv({ ...reference, settings, maxContextLength: 262144 });
    expect(flagsOf(argv.slice(1))).toEqual({ ...inferencexReplayFlags, '--max-context-length': ['262144'] });
    const i = argv.indexOf('--max-context-length');
    expect(argv[i - 1]).toBe('--tokenizer-trust-remote-code');
    expect(argv[i + 2]).toBe('--num-dataset-entries');
    expect(buildAiperfArgv({ ...reference, settings, maxContextLength: 0 })).not.toContain('--max-context-length');
    expect(buildAiperfArgv({ ...reference, settings })).not.toContain('--max-context-length');
  });
  it('passes --max-context-length in the pypi flavour too (PyPI aiperf 0.13.0 accepts it for Weka traces)', () => {
    // .tools/aiperf-venv aiperf 0.13.0: config/flags/cli_config.py declares `--max-context-length` (int ≥ 1) and
    // _converter_dataset.py `_apply_max_context_length` routes it onto Weka file/public datasets
    const argv = buildAiperfArgv({
      ...reference,
      dataset: { kind: 'file', path: '/data/traces', entries: 8 },
      maxContextLength: 4096,
      settings: agentxSettingsSchema.parse({ aiperf: { flavor: 'pypi' } }),
    });
    expect(argv.join(' ')).toContain('--max-context-length 4096');
  });
  it('adds the conditional flags of build_replay_cmd under their conditions: --extra-inputs, the dynamo-* routing pair', () => {
    // same file and commit: `--extra-inputs $AIPERF_EXTRA_INPUTS` when set; for FRAMEWORK=dynamo-*
    // `--use-dynamo-conv-aware-routing --dynamo-session-timeout-seconds ${AIPERF_DYNAMO_SESSION_TIMEOUT_SECONDS:-3600}`
    const argv = buildAiperfArgv({
      ...reference,
      dynamoConvAwareRouting: true,
      settings: agentxSettingsSchema.parse({ aiperf: { extraInputs: ['ignore_eos:true'] } }),
    });
    expect(flagsOf(argv.slice(1))).toEqual({
      ...inferencexReplayFlags,
      '--extra-inputs': ['ignore_eos:true'],
      '--use-dynamo-conv-aware-routing': [],
      '--dynamo-session-timeout-seconds': ['3600'],
    });
  });
  it("sends a P/D router's headers as one --header JSON object, commas and colons intact; none without", () => {
    // aiperf's `Header:Value` form would split `h1:p1,h2:p2` at the comma (aiperf/config/loader/parsing.py
    // `_parse_str_as_tuple_list`); a value starting with `{` is read as JSON verbatim
    const prefillers = { 'x-prefiller-host-port': '127.0.0.1:23901,127.0.0.1:23965' };
    const argv = buildAiperfArgv({ ...reference, headers: prefillers, settings: agentxSettingsSchema.parse({}) });
    expect(flagsOf(argv.slice(1))).toEqual({
      ...inferencexReplayFlags,
      '--header': ['{"x-prefiller-host-port":"127.0.0.1:23901,127.0.0.1:23965"}'],
    });
    expect(JSON.parse(argv[argv.indexOf('--header') + 1]!)).toEqual(prefillers);
    // benchmark_command.txt: one shell word, as the quoting helper writes it
    expect(shellJoin(['aiperf', ...argv])).toContain(
      `--header '{"x-prefiller-host-port":"127.0.0.1:23901,127.0.0.1:23965"}'`,
    );
    expect(buildAiperfArgv({ ...reference, headers: {}, settings: agentxSettingsSchema.parse({}) })).not.toContain(
      '--header',
    );
  });
  it('shell-quotes arguments safely', () => {
    expect(shellJoin(['a b', "it's", 'x'])).toBe(`'a b' 'it'\\''s' x`);
  });
});

describe('aiperf export parsing', () => {
  it('maps profile_export.jsonl rows (real aiperf 0.13.0 output) to request records', () => {
    // libs/agentx/test/data/aiperf-profile-export.jsonl: the first rows of a real `aiperf profile` run
    // (PyPI aiperf 0.13.0, inferencex-agentx-mvp scenario) against llm-d-inference-sim v0.10.2.
    const rows = parseAiperfJsonl(readFileSync(new URL('./data/aiperf-profile-export.jsonl', import.meta.url), 'utf8'));
    const recs = aiperfToRecords(rows, 'http://sim');
    expect(recs.length).toBe(rows.length);
    expect(recs.some((r) => r.phase === 'warmup')).toBe(true);
    expect(recs.some((r) => r.phase === 'profiling')).toBe(true);
    for (const r of recs) {
      expect(r.ok).toBe(true);
      expect(r.osl).toBeGreaterThan(0);
      expect(r.ttft_ms!).toBeGreaterThan(0);
      expect(r.e2el_ms!).toBeGreaterThanOrEqual(r.ttft_ms!);
    }
  });
  it('reads the exit code the aiperf wrapper prints, then its `times`', () => {
    const log = 'aiperf output\ninfersweep-aiperf-exit=3\n0m0.010s 0m0.002s\n1m2.500s 0m0.500s\n';
    expect(wrapperExitCode(log)).toBe(3);
    expect(parseTimes(log)).toBeCloseTo(63);
    expect(wrapperExitCode('killed before the wrapper printed')).toBeNull();
  });
  it('parses bash `times` for the child CPU', () => {
    expect(parseTimes('x\n0m0.010s 0m0.002s\n1m2.500s 0m0.500s\n')).toBeCloseTo(63);
    expect(parseTimes('nothing')).toBeNull();
  });
});

describe('the environment aiperf runs with', () => {
  const worker = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/bench',
    LC_ALL: 'C.UTF-8',
    HF_HOME: '/cache/hf',
    AIPERF_LOG_LEVEL: 'debug',
    https_proxy: 'http://proxy:3128',
    TEMPORAL_API_KEY: 'tmprl-key',
    TEMPORAL_TLS_CLIENT_KEY_PATH: '/etc/worker/key.pem',
    HF_TOKEN: 'hf_secret',
    AWS_SECRET_ACCESS_KEY: 'aws-secret',
    INFERSWEEP_WORKER_SECRETS: 'HF_TOKEN',
    GPU_CLUSTER_PASSWORD: 'pw',
    UNSET: undefined,
  };

  it("keeps paths, locale, proxies, the Hugging Face cache and aiperf's settings; drops the worker's credentials", () => {
    const env = aiperfProcessEnv(worker, { AIPERF_DATASET_CONFIGURATION_TIMEOUT: '1800', HOME: '/run/home' });
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/run/home', // the run's own variables win
      LC_ALL: 'C.UTF-8',
      HF_HOME: '/cache/hf',
      AIPERF_LOG_LEVEL: 'debug',
      https_proxy: 'http://proxy:3128',
      AIPERF_DATASET_CONFIGURATION_TIMEOUT: '1800',
    });
  });

  it('the local runner starts aiperf with exactly that environment (a real process prints what it got)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aiperf-env-'));
    const planted = { INFERSWEEP_TEST_CREDENTIAL_KEY: 'must-not-leak', AIPERF_PLANTED: 'kept' };
    Object.assign(process.env, planted);
    try {
      const out = await localAiperfRunner.run({
        binary: 'env',
        argv: [],
        env: { RUN_VAR: 'run' },
        logFile: join(dir, 'benchmark.log'),
        artifactDir: dir,
        hardTimeoutMs: 20_000,
      });
      expect(out.exitCode).toBe(0);
      const printed = readFileSync(join(dir, 'benchmark.log'), 'utf8');
      expect(printed).toContain('RUN_VAR=run');
      expect(printed).toContain('AIPERF_PLANTED=kept');
      expect(printed).toContain(`PATH=${process.env.PATH}`);
      expect(printed).not.toContain('must-not-leak');
    } finally {
      for (const k of Object.keys(planted)) delete process.env[k];
    }
  });
});

describe('the tokenizer aiperf is given (benchmark_command.txt, written before aiperf runs)', () => {
  const run = async (aiperf: Record<string, unknown>, tokenizer?: string): Promise<string> => {
    const outDir = mkdtempSync(join(tmpdir(), 'aiperf-tok-'));
    await runAiperfPoint({
      concurrency: 1,
      endpoints: ['http://127.0.0.1:9'],
      metricsEndpoints: [],
      servedModel: 'served/name',
      gpuCount: 1,
      identity: {
        sweepId: 's',
        orientation: 'o',
        topology: 't',
        image: 'i',
        model: 'served/name',
        engineArgsFingerprint: 'x',
        jobId: null,
        nodes: ['n'],
        attempt: 0,
        deploymentPolicy: 'shared-server',
      },
      settings: {
        profileDurationSeconds: 10,
        nonCanonical: true,
        aiperf: { binary: '/bin/false', flavor: 'pypi', ...aiperf },
      },
      outDir,
      ...(tokenizer === undefined ? {} : { tokenizer }),
    }).catch(() => undefined); // /bin/false: no artifacts; only the command line matters here
    const words = readFileSync(join(outDir, 'benchmark_command.txt'), 'utf8').trim().split(' ');
    return words[words.indexOf('--tokenizer') + 1]!;
  };

  it('the served model’s tokenizer when the point gives one (the local-vllm plan gives the generated model’s directory)', async () => {
    expect(await run({}, '/tools/models/tiny-moe')).toBe('/tools/models/tiny-moe');
  });
  it('agentx.aiperf.tokenizer overrides it', async () => {
    expect(await run({ tokenizer: '/tok' }, '/tools/models/tiny-moe')).toBe('/tok');
  });
  it('without either, the served name (InferenceX passes --tokenizer $MODEL)', async () => {
    expect(await run({})).toBe('served/name');
  });
});
