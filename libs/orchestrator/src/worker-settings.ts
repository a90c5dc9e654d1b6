/**
 * The worker's own authority: what a worker is willing to do for a sweep, read once when the worker
 * starts, never taken from a sweep input. Anyone who can start a workflow on the task queue controls
 * the sweep input (on a shared Temporal cluster: namespace write access), so the input may only ask
 * for what these settings allow:
 *  - `clusters`: the site profiles this worker serves, by name (the plan's `cluster`): login host,
 *    user, key and pinned host key, partition, account, shared dir, container runtime, mounts. The
 *    plan names a profile; every site field of the plan must equal the profile's, and the executor
 *    is built from the profile, never from the plan;
 *  - `secretNames`: the secret variables it resolves for a server (the plan's `secretEnv`);
 *  - `secretsFiles`: the secrets files it reads (the plan's `secretsFile`);
 *  - `aiperfBinaries`: the aiperf executables it runs on its host (the plan's `agentx.aiperf.binary`);
 *  - `nodeBinaries`: the executables it launches under srun on the cluster's nodes (argv[0] of each
 *    node's launch: vLLM, the simulator or vLLM's CPU build, and of the P/D router it launches,
 *    llm-d's pd-sidecar; topology's launchedExecutables lists them);
 *  - `resultsRoots`: the folders under which it writes results (the input's `resultsDir`);
 *  - `trustRemoteCodeTokenizers`: the tokenizer directories aiperf may run Python from
 *    (`--tokenizer-trust-remote-code`); none by default;
 *  - `gpuHourPrices`: the price table for cost per token, USD per GPU-hour by GPU model (the plan's
 *    `slurm.gpu`, e.g. `H200`); a GPU model without a price gets no $/M tokens, never a guessed one.
 *    Environment form: `H200=3.5,B200=5.25`.
 * Anything else is refused at prepareSweep (./activities/input-checks.ts) with an error naming the
 * field, the value and the setting that would allow it.
 *
 * Source: the JSON file named by INFERSWEEP_WORKER_SETTINGS (keys as above), else one environment
 * variable per setting (comma-separated lists), else the defaults below. A site profile given by name
 * (the variable's `name` or `name=profile`, or a list of names in the file) is read from the sweep
 * config INFERSWEEP_WORKER_CONFIG (default: the shipped config holding that cluster,
 * ./config-file.ts configFileFor), placeholders expanded from the worker's environment.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';
import { z } from 'zod';
import { dataDirOf, repoRoot } from '@infersweep/core';
import { ENTRYPOINT, SIDECAR_BINARY, SIMULATOR_BINARY, clusterSchema } from '@infersweep/topology';
import { loadSweepConfig } from './config-file';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const absolutePath = z
  .string()
  .min(1)
  .refine((p) => isAbsolute(p), 'must be an absolute path')
  .transform((p) => normalize(p).replace(/(.)\/+$/, '$1'));

/**
 * A site profile: where and as whom the worker reaches a cluster, and what it may ask of it. The
 * fields of a config's `clusters.<name>` that say where (`loginHost`, `sharedDir`, `squashDir`), as
 * whom (`partition`, `account`), how (`containerRuntime`, `mounts`) and which port of the nodes the
 * client scrapes for GPU telemetry (`gpuTelemetry`).
 */
export const siteProfileSchema = clusterSchema
  .pick({
    loginHost: true,
    partition: true,
    account: true,
    sharedDir: true,
    containerRuntime: true,
    mounts: true,
    squashDir: true,
    gpuTelemetry: true,
  })
  .strict();
export type SiteProfile = z.infer<typeof siteProfileSchema>;

const CLUSTER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const workerSettingsSchema = z
  .object({
    clusters: z
      .record(z.string().regex(CLUSTER_NAME, 'a cluster name'), siteProfileSchema)
      .refine((c) => Object.keys(c).length > 0, 'serve at least one cluster'),
    secretNames: z.array(z.string().regex(ENV_NAME, 'must be an environment variable name')),
    secretsFiles: z.array(absolutePath),
    aiperfBinaries: z.array(z.string().min(1)),
    nodeBinaries: z.array(z.string().min(1)),
    resultsRoots: z.array(absolutePath).min(1),
    trustRemoteCodeTokenizers: z.array(absolutePath),
    gpuHourPrices: z.record(z.string().min(1), z.number().positive('a price is USD per GPU-hour, > 0')),
  })
  .strict();

export type WorkerSettings = z.infer<typeof workerSettingsSchema>;
export type WorkerSettingKey = keyof WorkerSettings;

/** Where each setting comes from when no settings file is given. */
export const WORKER_SETTING_ENV: Readonly<Record<WorkerSettingKey, string>> = {
  clusters: 'INFERSWEEP_WORKER_CLUSTERS',
  secretNames: 'INFERSWEEP_WORKER_SECRETS',
  secretsFiles: 'INFERSWEEP_WORKER_SECRETS_FILES',
  aiperfBinaries: 'INFERSWEEP_WORKER_AIPERF',
  nodeBinaries: 'INFERSWEEP_WORKER_NODE_BINARIES',
  resultsRoots: 'INFERSWEEP_WORKER_RESULTS_ROOTS',
  trustRemoteCodeTokenizers: 'INFERSWEEP_WORKER_TRUST_REMOTE_CODE_TOKENIZERS',
  gpuHourPrices: 'INFERSWEEP_WORKER_GPU_PRICES',
};
export const WORKER_SETTINGS_FILE_ENV = 'INFERSWEEP_WORKER_SETTINGS';
/** The sweep config the site profiles named by cluster are read from. */
export const WORKER_SITE_CONFIG_ENV = 'INFERSWEEP_WORKER_CONFIG';

/** A worker setting is malformed: the worker does not start. */
export class WorkerSettingsError extends Error {
  override readonly name = 'WorkerSettingsError';
}

/** How a setting is named in messages: the settings file's key, or its environment variable. */
export function settingName(key: WorkerSettingKey, env: NodeJS.ProcessEnv = process.env): string {
  const file = env[WORKER_SETTINGS_FILE_ENV];
  return file ? `${key} in ${file} (${WORKER_SETTINGS_FILE_ENV})` : WORKER_SETTING_ENV[key];
}

const list = (v: string | undefined): string[] | undefined =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');

/**
 * The site profile `profile` of the worker's site config (INFERSWEEP_WORKER_CONFIG, else the shipped
 * config holding that cluster), with its placeholders expanded from the worker's environment.
 */
export function siteProfileFromConfig(profile: string, env: NodeJS.ProcessEnv = process.env): SiteProfile {
  const config = env[WORKER_SITE_CONFIG_ENV];
  const where = config ? `${WORKER_SITE_CONFIG_ENV}=${config}` : 'the shipped config';
  let clusters: Record<string, unknown>;
  try {
    clusters = loadSweepConfig({ ...(config ? { config } : {}), clusters: [profile], env }).config.clusters;
  } catch (e) {
    throw new WorkerSettingsError(`site profile ${profile} (${where}): ${(e as Error).message}`);
  }
  const found = clusters[profile];
  if (found === undefined)
    throw new WorkerSettingsError(
      `site profile ${profile}: ${where} has no cluster ${profile} (it has ${Object.keys(clusters).join(', ')}); set ${WORKER_SITE_CONFIG_ENV} to the config that holds it, or give the profile in the settings file (${WORKER_SETTINGS_FILE_ENV})`,
    );
  return siteProfileSchema.parse(pickSite(found));
}

/** The site fields of a config's cluster profile. */
function pickSite(cluster: unknown): unknown {
  if (cluster === null || typeof cluster !== 'object') return cluster;
  const keys = Object.keys(siteProfileSchema.shape);
  return Object.fromEntries(Object.entries(cluster).filter(([k]) => keys.includes(k)));
}

/** `name` or `name=profile` entries → the profiles they name, read from the site config. */
function profilesByName(entries: readonly string[], env: NodeJS.ProcessEnv): Record<string, SiteProfile> {
  const out: Record<string, SiteProfile> = {};
  for (const e of entries) {
    const [name = '', profile = name] = e.split('=').map((s) => s.trim());
    out[name] = siteProfileFromConfig(profile, env);
  }
  return out;
}

/**
 * The defaults: the cluster the worker was started for (its profile from the site config), no
 * secrets, the aiperf on PATH and the one `npm run setup` installs, on the nodes what the planner and
 * the shipped profiles launch (`vllm`, the simulator and pd-sidecar on PATH, the vLLM CPU build
 * `npm run setup` installs), results under the data dir (INFERSWEEP_DATA, default `.infersweep`), no
 * tokenizer trusted to run code.
 */
export function defaultWorkerSettings(cluster: string, env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  return { clusters: profilesByName([cluster], env), ...defaultsWithoutClusters(env) };
}

/** The defaults of every setting but `clusters` (settings that name their own clusters read no default profile). */
function defaultsWithoutClusters(env: NodeJS.ProcessEnv): Omit<WorkerSettings, 'clusters'> {
  const tools = env.INFERSWEEP_TOOLS ?? join(repoRoot, '.tools');
  return {
    secretNames: [],
    secretsFiles: [],
    aiperfBinaries: ['aiperf', join(tools, 'aiperf-venv', 'bin', 'aiperf')],
    nodeBinaries: [ENTRYPOINT[0], SIMULATOR_BINARY, SIDECAR_BINARY, join(tools, 'vllm-venv', 'bin', 'vllm')],
    resultsRoots: [normalize(dataDirOf(env)).replace(/(.)\/+$/, '$1')],
    trustRemoteCodeTokenizers: [],
    gpuHourPrices: {},
  };
}

/** `MODEL=price` entries (the environment form of gpuHourPrices); a malformed entry is kept as is for the schema to name. */
function priceTable(entries: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    entries.map((e) => {
      const [model = '', price = ''] = e.split('=').map((x) => x.trim());
      return [model, /^\d+(\.\d+)?$/.test(price) ? Number(price) : price];
    }),
  );
}

/** The price of one GPU-hour of `gpu` (the plan's `slurm.gpu`), case-insensitive; undefined without one. */
export function gpuHourPrice(settings: Pick<WorkerSettings, 'gpuHourPrices'>, gpu: string): number | undefined {
  const key = Object.keys(settings.gpuHourPrices).find((k) => k.toLowerCase() === gpu.toLowerCase());
  return key === undefined ? undefined : settings.gpuHourPrices[key];
}

const itemName = (p: PropertyKey): string => (typeof p === 'number' ? `item ${p}` : String(p));

function validate(raw: unknown, where: (key: string) => string): WorkerSettings {
  const r = workerSettingsSchema.safeParse(raw);
  if (r.success) return r.data;
  const msgs = r.error.issues.map((i) => {
    const key = String(i.path[0] ?? '');
    return `${key ? where(key) : 'worker settings'}${i.path.length > 1 ? ` (${i.path.slice(1).map(itemName).join('.')})` : ''}: ${i.message}`;
  });
  throw new WorkerSettingsError(`invalid worker settings: ${msgs.join('; ')}`);
}

/** The settings' `clusters` as given: site profiles by name, or names (`name` / `name=profile`) of the site config's profiles. */
function clustersOf(given: unknown, env: NodeJS.ProcessEnv): unknown {
  if (!Array.isArray(given)) return given;
  return profilesByName(
    given.filter((g): g is string => typeof g === 'string'),
    env,
  );
}

/**
 * The worker's settings, read once at start (env is the worker's environment). A settings file
 * replaces the environment variables entirely; a key it leaves out takes the default.
 */
export function loadWorkerSettings(cluster: string, env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const file = env[WORKER_SETTINGS_FILE_ENV];
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new WorkerSettingsError(
        `${WORKER_SETTINGS_FILE_ENV}=${file}: cannot read the worker settings (${(e as Error).message})`,
      );
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new WorkerSettingsError(`${WORKER_SETTINGS_FILE_ENV}=${file}: worker settings are a JSON object`);
    const given = parsed as Record<string, unknown>;
    const defaults = 'clusters' in given ? defaultsWithoutClusters(env) : defaultWorkerSettings(cluster, env);
    const merged: Record<string, unknown> = { ...defaults, ...given };
    if ('clusters' in given) merged.clusters = clustersOf(given.clusters, env);
    return validate(merged, (key) => `${key} in ${file} (${WORKER_SETTINGS_FILE_ENV})`);
  }
  const clusters = list(env[WORKER_SETTING_ENV.clusters]);
  const fromEnv: Record<string, unknown> = clusters
    ? { ...defaultsWithoutClusters(env), clusters: profilesByName(clusters, env) }
    : { ...defaultWorkerSettings(cluster, env) };
  for (const [key, name] of Object.entries(WORKER_SETTING_ENV)) {
    if (key === 'clusters') continue;
    const v = list(env[name]);
    if (v !== undefined) fromEnv[key] = key === 'gpuHourPrices' ? priceTable(v) : v;
  }
  return validate(fromEnv, (key) => WORKER_SETTING_ENV[key as WorkerSettingKey] ?? key);
}

export const COMPLETING_PATIENCE_ENV = 'INFERSWEEP_WORKER_COMPLETING_PATIENCE_SECONDS';
/** Release's start-to-close is 15 min (./workflows/activities.ts): the patience stays a minute under it. */
const MAX_COMPLETING_PATIENCE_SECONDS = 14 * 60;

/**
 * How long release waits for a cancelled job to leave COMPLETING (a hung GPU process, a long epilog)
 * before it marks the job and its nodes stuck and moves on, ms; unset: the activities' default (10 min).
 */
export function completingPatienceMs(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return secondsVariable(
    env,
    COMPLETING_PATIENCE_ENV,
    MAX_COMPLETING_PATIENCE_SECONDS,
    "the release activity's 15-minute limit less a minute",
  );
}

export const POLL_ENV = 'INFERSWEEP_WORKER_POLL_SECONDS';
const MAX_POLL_SECONDS = 60;

/**
 * The activities' poll period, ms: a server's readiness, an aiperf step's exit, and (at twice it) the
 * allocation's and server steps' liveness, one `squeue` on the login node each; unset: the activities'
 * default (1 s). A sweep sends ~1.6 login-node commands a second at the default (docs/cluster.md item 4);
 * a busy login node or slurmctld wants 10 s or more, at the cost of seeing a lost server up to twice that late.
 */
export function pollMsFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return secondsVariable(
    env,
    POLL_ENV,
    MAX_POLL_SECONDS,
    'the liveness poll is twice it: a lost server seen within ~2 min',
  );
}

/** A worker's duration in seconds from its variable, in ms; unset or empty: undefined. A bad value stops the worker, named. */
function secondsVariable(env: NodeJS.ProcessEnv, name: string, max: number, why: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const s = Number(raw);
  if (!Number.isFinite(s) || s <= 0 || s > max)
    throw new WorkerSettingsError(
      `${name}=${JSON.stringify(raw)}: give seconds, more than 0 and at most ${max} (${why})`,
    );
  return Math.round(s * 1000);
}
