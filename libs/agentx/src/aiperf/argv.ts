import type { AgentxSettings } from '@infersweep/topology';

/**
 * The exact InferenceX aiperf command (benchmarks/benchmark_lib.sh `build_replay_cmd`,
 * agentx-inferencex.md §1.3), as an argv (pure). `flavor: 'pypi'` expresses the same run with the
 * flags PyPI aiperf 0.13 accepts: no `--warmup-requests-per-lane` (fork-only; there is no equivalent),
 * `--agentic-warmup-grace-period` for the warmup drain bound, `--ui-type none`, and because that build's
 * scenario forbids the per-trace idle cap, `--unsafe-override` (the run is then stamped non-submittable).
 */
export interface AiperfArgvInput {
  urls: string[];
  servedModel: string;
  /** HF id of the tokenizer (never the served alias); 'builtin' for offline runs. */
  tokenizer: string;
  concurrency: number;
  settings: AgentxSettings;
  metricsEndpoints: string[];
  artifactDir: string;
  /** Trace corpus: a pinned public loader, or a local Weka trace file/directory. */
  dataset: { kind: 'public'; loader: string; entries: number } | { kind: 'file'; path: string; entries: number };
  /** Add `--use-dynamo-conv-aware-routing --dynamo-session-timeout-seconds 3600` (FRAMEWORK=dynamo-*). */
  dynamoConvAwareRouting?: boolean;
  unsafeOverride?: boolean;
  /**
   * `--max-context-length` (InferenceX passes `$MAX_MODEL_LEN` when set and not 0: the served context, so the
   * loader drops traces whose recorded peak exceeds it). PyPI aiperf 0.13 accepts the flag too (its
   * cli_config.py `max_context_length`, Weka datasets only), so both flavours pass it.
   */
  maxContextLength?: number;
  /**
   * Pass `--tokenizer-trust-remote-code`: the tokenizer may run Python of its own (`auto_map`) on the host
   * aiperf runs on. Only for a tokenizer the worker's settings trust (trustRemoteCodeTokenizers); never by
   * default.
   */
  trustRemoteCode?: boolean;
  /**
   * `--goodput` (search.slo.goodput's per-request bounds, ms): aiperf then counts its own
   * `good_request_count` over the same requests, a cross-check of the record's goodput. Not in
   * InferenceX's command; added only when the config gives goodput bounds.
   */
  goodput?: { ttftMs?: number; tpotMs?: number; e2elMs?: number };
  /**
   * Headers sent with every request (a P/D router's prefillers, `x-prefiller-host-port`), as one `--header`
   * holding a JSON object. PyPI aiperf 0.13.0 declares `--header`/`-H` ("Custom HTTP headers to include with
   * every request", aiperf/config/flags/cli_config.py `headers`, parsed by `parse_str_or_dict_as_tuple_list`);
   * its `Header:Value` form splits the value at commas (aiperf/config/loader/parsing.py
   * `_parse_str_as_tuple_list`), which would cut a list of prefillers `h1:p1,h2:p2` apart, while a value
   * starting with `{` is read as JSON verbatim. Not in InferenceX's command; only when the plan's router asks.
   */
  headers?: Readonly<Record<string, string>>;
}

export const AIPERF_ENV: Readonly<Record<string, string>> = {
  AIPERF_DATASET_CONFIGURATION_TIMEOUT: '1800',
  AIPERF_SERVICE_PROFILE_CONFIGURE_TIMEOUT: '1800',
  AIPERF_DATASET_WEKA_LIVE_ASSISTANT_RESPONSES: '0',
  AIPERF_UI_REALTIME_METRICS_ENABLED: 'true',
};

const num = (x: number): string => (Number.isInteger(x) ? String(x) : String(x));
/** aiperf prints floats like Python: 1.0 not 1. */
const pyFloat = (x: number): string => (Number.isInteger(x) ? `${x}.0` : String(x));

export function buildAiperfArgv(i: AiperfArgvInput): string[] {
  const s = i.settings;
  const pypi = s.aiperf.flavor === 'pypi';
  const a: string[] = ['profile', '--scenario', 'inferencex-agentx-mvp'];
  for (const u of i.urls) a.push('--url', u);
  a.push('--endpoint', '/v1/chat/completions', '--endpoint-type', 'chat', '--streaming');
  a.push('--model', i.servedModel, '--tokenizer', i.tokenizer);
  a.push('--concurrency', String(i.concurrency), '--benchmark-duration', num(s.profileDurationSeconds));
  a.push('--stats-interval', num(s.aiperf.statsIntervalSeconds), '--random-seed', String(s.randomSeed));
  a.push('--failed-request-threshold', pyFloat(s.failedRequestThreshold));
  a.push(
    '--trajectory-start-min-ratio',
    pyFloat(s.trajectoryStartMinRatio),
    '--trajectory-start-max-ratio',
    pyFloat(s.trajectoryStartMaxRatio),
  );
  if (!pypi) a.push('--warmup-requests-per-lane', String(s.warmupRequestsPerLane));
  a.push('--trace-idle-gap-cap-seconds', num(s.traceIdleGapCapSeconds));
  a.push(pypi ? '--agentic-warmup-grace-period' : '--warmup-grace-period', num(s.warmupGracePeriodSeconds));
  a.push('--use-server-token-count');
  for (const e of s.aiperf.extraInputs) a.push('--extra-inputs', e);
  if (i.headers !== undefined && Object.keys(i.headers).length > 0) a.push('--header', JSON.stringify(i.headers));
  if (i.dynamoConvAwareRouting) a.push('--use-dynamo-conv-aware-routing', '--dynamo-session-timeout-seconds', '3600');
  a.push('--no-gpu-telemetry');
  if (i.trustRemoteCode === true && i.tokenizer !== 'builtin') a.push('--tokenizer-trust-remote-code');
  if (i.maxContextLength !== undefined && i.maxContextLength > 0)
    a.push('--max-context-length', String(i.maxContextLength));
  const slos = aiperfGoodputSlos(i.goodput);
  if (slos) a.push('--goodput', slos);
  a.push('--num-dataset-entries', String(i.dataset.entries));
  a.push('--slice-duration', pyFloat(s.aiperf.sliceDurationSeconds));
  if (i.metricsEndpoints.length > 0) a.push('--server-metrics', ...i.metricsEndpoints);
  a.push('--output-artifact-dir', i.artifactDir);
  if (s.profileDurationSeconds < s.canonicalMinDurationSeconds || i.unsafeOverride || pypi) a.push('--unsafe-override');
  if (i.dataset.kind === 'public') a.push('--public-dataset', i.dataset.loader);
  else a.push('--custom-dataset-type', 'weka_trace', '--input-file', i.dataset.path);
  if (pypi) a.push('--ui-type', 'none');
  return a;
}

/** aiperf's `--goodput` value: its metric tags with bounds in their display unit (ms); undefined without bounds. */
export function aiperfGoodputSlos(g: AiperfArgvInput['goodput']): string | undefined {
  if (!g) return undefined;
  const pairs = [
    ['time_to_first_token', g.ttftMs],
    ['inter_token_latency', g.tpotMs],
    ['request_latency', g.e2elMs],
  ].filter((p): p is [string, number] => p[1] !== undefined);
  return pairs.length ? pairs.map(([tag, v]) => `${tag}:${v}`).join(' ') : undefined;
}
