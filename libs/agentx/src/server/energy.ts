import { z } from 'zod';
import { parsePrometheus } from './prometheus';

/**
 * GPU energy over exactly the profiling window (pure), from GPU telemetry the cluster exposes:
 * NVIDIA's DCGM exporter (`DCGM_FI_DEV_POWER_USAGE`, a gauge in W, and
 * `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`, a counter in mJ since boot: NVIDIA/dcgm-exporter
 * etc/default-counters.csv) scraped over time, or `nvidia-smi --query-gpu=…,power.draw --format=csv`
 * sampled on the nodes. The integral and its validity gate are InferenceX's (utils/aggregate_power.py
 * @ 843c6254f, `integrate_power`): per GPU, trapezoids over the samples inside the window with the power
 * linearly interpolated at both window edges; `power_valid` only with no reason among
 * `no_usable_power_samples`, `expected_gpu_count_mismatch`, `insufficient_power_samples`,
 * `benchmark_window_not_bracketed` (a GPU's samples do not cover the window) and `sampling_gap_exceeded`
 * (two consecutive samples around or inside the window more than 3 s apart).
 */
export const DCGM = {
  power: 'DCGM_FI_DEV_POWER_USAGE',
  energy: 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION',
} as const;

/** InferenceX's `_DEFAULT_MAX_SAMPLE_GAP_S`. */
export const MAX_SAMPLE_GAP_S = 3;

/** One power reading of one GPU at one time (unix seconds). */
export interface PowerSample {
  /** A stable GPU identity: `<host>/<gpu index>` (DCGM `Hostname`/`gpu`, or the sampler's node and index). */
  gpu: string;
  t: number;
  watts: number;
}

export interface DcgmGpuReading {
  gpu: string;
  uuid: string | null;
  watts: number | null;
  /** The energy counter, joules (DCGM reports mJ). */
  energyJ: number | null;
}

/**
 * One scrape of a DCGM exporter: power and energy per whole GPU. MIG-instance series (with `GPU_I_ID`)
 * are not GPUs and are left out; the host is the `Hostname` label, else `host` (the node the scrape came from).
 * A GPU in MIG mode reports its power only on its instances' series (NVIDIA/dcgm-exporter issue 317 shows such
 * a scrape): it is then absent here, and `integrateEnergy`'s GPU count makes the window invalid, never smaller.
 */
export function parseDcgmExposition(text: string, host: string): DcgmGpuReading[] {
  const out = new Map<string, DcgmGpuReading>();
  for (const s of parsePrometheus(text).samples) {
    if (s.name !== DCGM.power && s.name !== DCGM.energy) continue;
    if (s.labels.GPU_I_ID !== undefined || s.labels.gpu === undefined) continue;
    const gpu = `${s.labels.Hostname ?? host}/${s.labels.gpu}`;
    const r = out.get(gpu) ?? { gpu, uuid: s.labels.UUID ?? null, watts: null, energyJ: null };
    if (s.name === DCGM.power) r.watts = s.value;
    else r.energyJ = s.value / 1000;
    out.set(gpu, r);
  }
  return [...out.values()].sort((a, b) => a.gpu.localeCompare(b.gpu, 'en', { numeric: true }));
}

/**
 * `nvidia-smi --query-gpu=[timestamp,][index,]power.draw --format=csv` output (with its header line). Rows
 * without an index are numbered in order; rows without a timestamp take `at` (the sampler's clock, unix s).
 * A `[N/A]` or unparseable power is skipped (InferenceX counts it as an invalid sample: so does the gate,
 * through the gap it leaves).
 */
export function parseNvidiaSmiPower(text: string, host: string, at?: number): PowerSample[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const header = (lines.shift() ?? '').split(',').map((h) => h.trim().toLowerCase());
  const col = (re: RegExp) => header.findIndex((h) => re.test(h));
  const power = col(/^power\.draw/);
  const time = col(/^timestamp/);
  const index = col(/^index$/);
  if (power < 0) throw new Error(`nvidia-smi CSV without a power.draw column (header: ${header.join(', ')})`);
  const out: PowerSample[] = [];
  lines.forEach((line, row) => {
    const cells = line.split(',').map((c) => c.trim());
    const watts = Number(/^(-?\d+(?:\.\d+)?)/.exec(cells[power] ?? '')?.[1] ?? Number.NaN);
    const t = time >= 0 ? Date.parse(`${(cells[time] ?? '').replace(/\//g, '-').replace(' ', 'T')}Z`) / 1000 : at;
    if (!Number.isFinite(watts) || t === undefined || !Number.isFinite(t)) return;
    out.push({ gpu: `${host}/${index >= 0 ? cells[index] : row}`, t, watts });
  });
  return out;
}

export interface EnergyIntegration {
  power_valid: boolean;
  invalid_reasons: string[];
  /** Joules per GPU over the window (GPUs whose samples could be integrated). */
  per_gpu_j: Record<string, number>;
  /** Σ per_gpu_j when every observed GPU integrated, else null. */
  total_j: number | null;
  /** total_j / window seconds, W. */
  avg_total_power_w: number | null;
  window_seconds: number;
}

function interpolate(s: readonly PowerSample[], t: number): number {
  const right = s.findIndex((x) => x.t >= t);
  const r = s[right]!;
  if (r.t === t || right === 0) return r.watts;
  const l = s[right - 1]!;
  return l.watts + ((t - l.t) / (r.t - l.t)) * (r.watts - l.watts);
}

/** Trapezoids over [start, end] with the power interpolated at both edges (InferenceX `_integrate_device`). */
function integrateGpu(s: readonly PowerSample[], start: number, end: number): number {
  const pts = [
    { t: start, w: interpolate(s, start) },
    ...s.filter((x) => x.t > start && x.t < end).map((x) => ({ t: x.t, w: x.watts })),
    { t: end, w: interpolate(s, end) },
  ];
  let j = 0;
  for (let i = 1; i < pts.length; i++) j += ((pts[i]!.t - pts[i - 1]!.t) * (pts[i]!.w + pts[i - 1]!.w)) / 2;
  return j;
}

/** Energy per GPU over exactly [start, end] (unix seconds), with InferenceX's validity reasons. */
export function integrateEnergy(
  samples: readonly PowerSample[],
  window: { start: number; end: number },
  expectedGpus?: number,
  maxGapSeconds = MAX_SAMPLE_GAP_S,
): EnergyIntegration {
  const reasons: string[] = [];
  const reason = (r: string) => void (reasons.includes(r) ? undefined : reasons.push(r));
  const byGpu = new Map<string, PowerSample[]>();
  for (const s of samples) byGpu.set(s.gpu, [...(byGpu.get(s.gpu) ?? []), s]);
  const windowSeconds = window.end - window.start;
  if (byGpu.size === 0) reason('no_usable_power_samples');
  if (expectedGpus !== undefined && byGpu.size > 0 && byGpu.size !== expectedGpus)
    reason('expected_gpu_count_mismatch');
  const perGpu: Record<string, number> = {};
  for (const [gpu, raw] of [...byGpu].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))) {
    const s = [...raw].sort((a, b) => a.t - b.t);
    if (s.length < 2) {
      reason('insufficient_power_samples');
      continue;
    }
    if (s[0]!.t > window.start || s[s.length - 1]!.t < window.end) {
      reason('benchmark_window_not_bracketed');
      continue;
    }
    const first = s.findLastIndex((x) => x.t <= window.start);
    const last = s.findIndex((x) => x.t >= window.end);
    const relevant = s.slice(first, last + 1);
    if (relevant.some((x, i) => i > 0 && x.t - relevant[i - 1]!.t > maxGapSeconds)) reason('sampling_gap_exceeded');
    perGpu[gpu] = integrateGpu(s, window.start, window.end);
  }
  const complete = byGpu.size > 0 && Object.keys(perGpu).length === byGpu.size;
  const total = complete ? Object.values(perGpu).reduce((a, b) => a + b, 0) : null;
  return {
    power_valid: reasons.length === 0,
    invalid_reasons: reasons,
    per_gpu_j: perGpu,
    total_j: total,
    avg_total_power_w: total === null || windowSeconds <= 0 ? null : total / windowSeconds,
    window_seconds: windowSeconds,
  };
}

/**
 * Power samples from timed DCGM scrapes (one exposition per scrape, with the time it was taken), for
 * `integrateEnergy`.
 */
export function dcgmPowerSamples(scrapes: readonly { t: number; host: string; text: string }[]): PowerSample[] {
  return scrapes.flatMap((s) =>
    parseDcgmExposition(s.text, s.host)
      .filter((r) => r.watts !== null)
      .map((r) => ({ gpu: r.gpu, t: s.t, watts: r.watts! })),
  );
}

/**
 * The DCGM energy counters' delta between two scrapes, joules per GPU: a cross-check of the integral (the
 * counter spans the scrape times, not the exact window; InferenceX's accumulator cross-check is advisory too).
 */
export function dcgmCounterEnergy(
  start: readonly DcgmGpuReading[],
  end: readonly DcgmGpuReading[],
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of end) {
    const s = start.find((x) => x.gpu === e.gpu);
    if (e.energyJ !== null && s?.energyJ != null && e.energyJ >= s.energyJ) out[e.gpu] = e.energyJ - s.energyJ;
  }
  return out;
}

export interface TokenCounts {
  input: number;
  output: number;
  /** Successful profiled requests. */
  requests: number;
}

/** What a point reports from a valid integration: InferenceX's fields, tokens/s per MW, $ per M tokens. */
export interface EnergyMetrics {
  avg_power_w: number;
  avg_total_gpu_power_w: number;
  total_gpu_energy_j: number;
  joules_per_successful_query: number;
  joules_per_input_token: number;
  joules_per_output_token: number;
  joules_per_total_token: number;
  /** Total tokens per second per megawatt of GPU power. */
  tokens_per_second_per_mw: number;
  /** Per role of a P/D deployment (InferenceX utils/aggregate_power_multinode.py): prefill J/input token, decode J/output token. */
  prefill_joules_per_input_token?: number;
  decode_joules_per_output_token?: number;
}

/**
 * The energy metrics of a valid integration (null when power is not valid or a denominator is 0: never a
 * number from an incomplete window). `roles` maps each GPU id to its role on a P/D deployment.
 */
export function energyMetrics(
  e: EnergyIntegration,
  tokens: TokenCounts,
  roles?: Readonly<Record<string, 'prefill' | 'decode'>>,
): EnergyMetrics | null {
  if (!e.power_valid || e.total_j === null || e.avg_total_power_w === null) return null;
  const total = tokens.input + tokens.output;
  if (tokens.input <= 0 || tokens.output <= 0 || tokens.requests <= 0 || e.window_seconds <= 0) return null;
  const gpus = Object.keys(e.per_gpu_j).length;
  const roleJ = (role: 'prefill' | 'decode') =>
    Object.entries(e.per_gpu_j)
      .filter(([g]) => roles?.[g] === role)
      .reduce((a, [, j]) => a + j, 0);
  return {
    avg_power_w: e.avg_total_power_w / gpus,
    avg_total_gpu_power_w: e.avg_total_power_w,
    total_gpu_energy_j: e.total_j,
    joules_per_successful_query: e.total_j / tokens.requests,
    joules_per_input_token: e.total_j / tokens.input,
    joules_per_output_token: e.total_j / tokens.output,
    joules_per_total_token: e.total_j / total,
    tokens_per_second_per_mw: total / e.window_seconds / (e.avg_total_power_w / 1e6),
    ...(roles === undefined
      ? {}
      : {
          prefill_joules_per_input_token: roleJ('prefill') / tokens.input,
          decode_joules_per_output_token: roleJ('decode') / tokens.output,
        }),
  };
}

/**
 * Dollars per million tokens at a GPU-hour price (the worker's price table): the GPUs held for the window,
 * priced by the hour, over the tokens the window produced. Null without a price or tokens.
 */
export function dollarsPerMillionTokens(
  pricePerGpuHour: number | undefined,
  gpus: number,
  windowSeconds: number,
  tokens: number,
): number | null {
  if (pricePerGpuHour === undefined || tokens <= 0 || windowSeconds <= 0) return null;
  return ((pricePerGpuHour * gpus * windowSeconds) / 3600 / tokens) * 1e6;
}

/** A point's energy block (the record's `energy`): the integration, its gate, the metrics and the cost. */
export const pointEnergySchema = z
  .object({
    source: z.enum(['dcgm', 'nvidia-smi']),
    window: z.object({ start: z.number(), end: z.number() }).strict(),
    power_valid: z.boolean(),
    invalid_reasons: z.array(z.string()),
    per_gpu_j: z.record(z.string(), z.number()),
    /** Joules per role of a P/D deployment (absent on an aggregated one). */
    per_role_j: z.object({ prefill: z.number(), decode: z.number() }).strict().optional(),
    /** Why a P/D deployment's energy has no per-role split (a GPU of no role's node, or of nodes of both roles). */
    per_role_unavailable: z.string().optional(),
    /** null when power is not valid (never a number from an incomplete window). */
    metrics: z.record(z.string(), z.number()).nullable(),
    /** The worker's price of one GPU-hour of this GPU model; null without one. */
    price_per_gpu_hour: z.number().nullable(),
    dollars_per_million_tokens: z.number().nullable(),
  })
  .strict();
export type PointEnergy = z.infer<typeof pointEnergySchema>;

export interface PointEnergyInput {
  source: PointEnergy['source'];
  samples: readonly PowerSample[];
  window: { start: number; end: number };
  /** GPUs the deployment holds (the plan's topology.gpus): a different count of observed GPUs invalidates power. */
  gpus: number;
  tokens: TokenCounts;
  roles?: Readonly<Record<string, 'prefill' | 'decode'>>;
  pricePerGpuHour?: number;
}

/** The record's energy block from the window's power samples (pure). */
export function pointEnergy(i: PointEnergyInput): PointEnergy {
  const e = integrateEnergy(i.samples, i.window, i.gpus);
  const m = energyMetrics(e, i.tokens, i.roles);
  const roleJ = (role: 'prefill' | 'decode') =>
    Object.entries(e.per_gpu_j)
      .filter(([g]) => i.roles?.[g] === role)
      .reduce((a, [, j]) => a + j, 0);
  return {
    source: i.source,
    window: { start: i.window.start, end: i.window.end },
    power_valid: e.power_valid,
    invalid_reasons: e.invalid_reasons,
    per_gpu_j: e.per_gpu_j,
    ...(i.roles === undefined ? {} : { per_role_j: { prefill: roleJ('prefill'), decode: roleJ('decode') } }),
    metrics: m === null ? null : { ...m },
    price_per_gpu_hour: i.pricePerGpuHour ?? null,
    dollars_per_million_tokens: dollarsPerMillionTokens(
      i.pricePerGpuHour,
      i.gpus,
      e.window_seconds,
      i.tokens.input + i.tokens.output,
    ),
  };
}

/** One timed scrape of a node's DCGM exporter: its exposition, or why there is none (unix seconds). */
export type DcgmScrape = { t: number; host: string } & ({ text: string } | { error: string });

/**
 * The record's energy block from timed DCGM scrapes of the allocation's nodes (pure). A scrape that failed or
 * does not parse is never bridged by the neighbouring samples: power is invalid, with a `dcgm_scrape_failed`
 * reason naming the node, the time and the error, and no metrics.
 */
export function dcgmPointEnergy(
  i: Omit<PointEnergyInput, 'source' | 'samples' | 'roles'> & {
    scrapes: readonly DcgmScrape[];
    /** The role of each scraped node (the scrape's `host`) on a P/D deployment: the GPUs it reports take it. */
    nodeRoles?: Readonly<Record<string, 'prefill' | 'decode'>>;
  },
): PointEnergy {
  const failures: string[] = [];
  const samples: PowerSample[] = [];
  const gpuNodes = new Map<string, Set<string>>();
  for (const s of i.scrapes) {
    try {
      // each scrape parsed once: a text that does not parse fails like an exporter that did not answer
      if ('error' in s) throw new Error(s.error);
      const got = dcgmPowerSamples([s]);
      samples.push(...got);
      for (const g of got) gpuNodes.set(g.gpu, (gpuNodes.get(g.gpu) ?? new Set()).add(s.host));
    } catch (e) {
      failures.push(`dcgm_scrape_failed: ${s.host} at ${s.t}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const { nodeRoles, ...rest } = i;
  const split = nodeRoles === undefined ? undefined : gpuRoles(gpuNodes, nodeRoles);
  const e = pointEnergy({
    ...rest,
    source: 'dcgm',
    samples,
    ...(split?.roles === undefined ? {} : { roles: split.roles }),
  });
  const withRoles = split?.unavailable === undefined ? e : { ...e, per_role_unavailable: split.unavailable };
  if (failures.length === 0) return withRoles;
  return { ...withRoles, power_valid: false, invalid_reasons: [...e.invalid_reasons, ...failures], metrics: null };
}

/**
 * Each GPU's role from the roles of the nodes whose exporter reported it (pure). A GPU reported by a node without
 * one role (not in the map: e.g. nodes of both roles behind one exporter), or by nodes of both roles, leaves the
 * split unavailable, said why: the per-role joules are then absent, never a split with a GPU in the wrong role.
 */
function gpuRoles(
  gpuNodes: ReadonlyMap<string, ReadonlySet<string>>,
  nodeRoles: Readonly<Record<string, 'prefill' | 'decode'>>,
): { roles?: Record<string, 'prefill' | 'decode'>; unavailable?: string } {
  const roles: Record<string, 'prefill' | 'decode'> = {};
  for (const [gpu, nodes] of [...gpuNodes].sort(([a], [b]) => a.localeCompare(b))) {
    const of = new Set([...nodes].map((n) => nodeRoles[n]));
    const [role] = of;
    if (of.size > 1 || role === undefined)
      return {
        unavailable: `GPU ${gpu} reported by ${[...nodes].join(', ')}, which ${of.size > 1 ? 'hold both roles' : 'hold no one role'}`,
      };
    roles[gpu] = role;
  }
  return { roles };
}

/** InferenceX's power schema version (utils/aggregate_power.py POWER_METRIC_SCHEMA_VERSION). */
export const POWER_METRIC_SCHEMA_VERSION = 2;

/** The keys InferenceX patches into an aggregate (single-node `_POWER_METRIC_KEYS` and the multinode role keys). */
const IX_POWER_KEYS = [
  'avg_power_w',
  'avg_total_gpu_power_w',
  'total_gpu_energy_j',
  'joules_per_successful_query',
  'joules_per_input_token',
  'joules_per_output_token',
  'joules_per_total_token',
  'prefill_joules_per_input_token',
  'decode_joules_per_output_token',
] as const;

/**
 * The power fields InferenceX's `_patch_power_result` / `_patch_agg` write into an aggregate: the schema
 * version, `power_valid` as 1/0, and only when valid the metrics rounded to 3 decimals for `_w`/`_j` keys and 6
 * otherwise. infersweep's own `tokens_per_second_per_mw` stays in the record (InferenceX has no such key).
 */
export function inferencexPowerFields(e: PointEnergy): Record<string, number> {
  const out: Record<string, number> = {
    power_metric_schema_version: POWER_METRIC_SCHEMA_VERSION,
    power_valid: e.power_valid && e.metrics !== null ? 1 : 0,
  };
  if (out.power_valid === 1)
    for (const k of IX_POWER_KEYS) {
      const v = e.metrics?.[k];
      if (v === undefined) continue;
      const digits = k.endsWith('_w') || k.endsWith('_j') ? 3 : 6;
      out[k] = Math.round(v * 10 ** digits) / 10 ** digits;
    }
  return out;
}
