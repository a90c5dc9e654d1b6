/**
 * The worker's own authority: what a worker is willing to do for a sweep, read once when the worker
 * starts, never taken from a sweep input. Anyone who can start a workflow on the task queue controls
 * the sweep input (on a shared Temporal cluster: namespace write access), so the input may only ask
 * for what these settings allow:
 *  - `clusters`: the cluster profiles this worker serves (the plan's `cluster`);
 *  - `secretNames`: the secret variables it resolves for a server (the plan's `secretEnv`);
 *  - `secretsFiles`: the secrets files it reads (the plan's `secretsFile`);
 *  - `aiperfBinaries`: the aiperf executables it runs on its host (the plan's `agentx.aiperf.binary`);
 *  - `resultsRoots`: the folders under which it writes results (the input's `resultsDir`).
 * Anything else is refused at prepareSweep (./activities/input-checks.ts) with an error naming the
 * field, the value and the setting that would allow it.
 *
 * Source: the JSON file named by INFERSWEEP_WORKER_SETTINGS (keys as above), else one environment
 * variable per setting (comma-separated lists), else the defaults below.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';
import { z } from 'zod';
import { dataDirOf, repoRoot } from '@infersweep/core';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const absolutePath = z
  .string()
  .min(1)
  .refine((p) => isAbsolute(p), 'must be an absolute path')
  .transform((p) => normalize(p).replace(/(.)\/+$/, '$1'));

export const workerSettingsSchema = z
  .object({
    clusters: z.array(z.string().min(1)).min(1),
    secretNames: z.array(z.string().regex(ENV_NAME, 'must be an environment variable name')),
    secretsFiles: z.array(absolutePath),
    aiperfBinaries: z.array(z.string().min(1)),
    resultsRoots: z.array(absolutePath).min(1),
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
  resultsRoots: 'INFERSWEEP_WORKER_RESULTS_ROOTS',
};
export const WORKER_SETTINGS_FILE_ENV = 'INFERSWEEP_WORKER_SETTINGS';

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
 * The defaults: the cluster the worker was started for, no secrets, the aiperf on PATH and the one
 * `npm run setup` installs, results under the data dir (INFERSWEEP_DATA, default `.infersweep`).
 */
export function defaultWorkerSettings(cluster: string, env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const tools = env.INFERSWEEP_TOOLS ?? join(repoRoot, '.tools');
  return {
    clusters: [cluster],
    secretNames: [],
    secretsFiles: [],
    aiperfBinaries: ['aiperf', join(tools, 'aiperf-venv', 'bin', 'aiperf')],
    resultsRoots: [normalize(dataDirOf(env)).replace(/(.)\/+$/, '$1')],
  };
}

function validate(raw: unknown, where: (key: string) => string): WorkerSettings {
  const r = workerSettingsSchema.safeParse(raw);
  if (r.success) return r.data;
  const msgs = r.error.issues.map((i) => {
    const key = String(i.path[0] ?? '');
    return `${key ? where(key) : 'worker settings'}${i.path.length > 1 ? ` (item ${String(i.path[1])})` : ''}: ${i.message}`;
  });
  throw new WorkerSettingsError(`invalid worker settings: ${msgs.join('; ')}`);
}

/**
 * The worker's settings, read once at start (env is the worker's environment). A settings file
 * replaces the environment variables entirely; a key it leaves out takes the default.
 */
export function loadWorkerSettings(cluster: string, env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const defaults = defaultWorkerSettings(cluster, env);
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
    return validate({ ...defaults, ...parsed }, (key) => `${key} in ${file} (${WORKER_SETTINGS_FILE_ENV})`);
  }
  const fromEnv: Record<string, unknown> = { ...defaults };
  for (const [key, name] of Object.entries(WORKER_SETTING_ENV)) {
    const v = list(env[name]);
    if (v !== undefined) fromEnv[key] = v;
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
  const raw = env[COMPLETING_PATIENCE_ENV];
  if (raw === undefined || raw.trim() === '') return undefined;
  const s = Number(raw);
  if (!Number.isFinite(s) || s <= 0 || s > MAX_COMPLETING_PATIENCE_SECONDS)
    throw new WorkerSettingsError(
      `${COMPLETING_PATIENCE_ENV}=${JSON.stringify(raw)}: give seconds, more than 0 and at most ${MAX_COMPLETING_PATIENCE_SECONDS} (the release activity's 15-minute limit less a minute)`,
    );
  return Math.round(s * 1000);
}
