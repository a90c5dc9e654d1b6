/**
 * The worker trusts no sweep input: what a sweep asks of the worker's host (its site profile,
 * secret names, secrets file, aiperf executable and tokenizer, results folder) and what it launches
 * on the cluster's nodes (every executable of the plan's launches) must be allowed by the worker's
 * own settings (../worker-settings.ts). The plan names a site profile and may not
 * override any of its fields (login host, user, key, pinned host key, partition, account, shared
 * dir, runtime, mounts, GPU telemetry port). Checked at prepareSweep, before any allocation, and again
 * whenever an activity opens a plan (an inline plan of an old history, or a plan.json edited on
 * disk, gets no more than prepareSweep would allow). Each refusal names the field, the value and
 * the setting that would allow it.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { InputError } from '@infersweep/core';
import { launchedExecutables, loginFileIssues, type SweepPlan } from '@infersweep/topology';
import { localFileProbe, resolveSecrets } from '@infersweep/slurm';
import { aiperfTokenizer } from '@infersweep/agentx';
import { settingName, type SiteProfile, type WorkerSettingKey, type WorkerSettings } from '../worker-settings';

/** A sweep input asks for something the worker's settings do not allow (never retried). */
export class RefusedInputError extends InputError {
  override readonly name = 'RefusedInputError';
}

export interface Refusal {
  field: string;
  value: string;
  setting: WorkerSettingKey;
  /** What the setting allows for this field, when not the setting's own list (a site profile's field). */
  allowed?: string;
  /** Why the value needs the setting, when being absent from it is not the whole story. */
  why?: string;
}

/** `dir` with symlinks of its longest existing prefix resolved (the rest does not exist yet). */
function realPathOf(dir: string): string {
  let head = resolve(dir);
  const rest: string[] = [];
  while (!existsSync(head) && dirname(head) !== head) {
    rest.unshift(head.slice(dirname(head).length).replace(/^\//, ''));
    head = dirname(head);
  }
  let real = head;
  try {
    real = realpathSync(head);
  } catch {
    // unreadable: compare as written
  }
  return resolve(real, ...rest);
}

/** True when `dir` is `root` or below it, symlinks resolved (no `..` escape). */
export function isUnder(dir: string, root: string): boolean {
  if (!isAbsolute(dir)) return false;
  const rel = relative(realPathOf(root), realPathOf(dir));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

const shown = (v: unknown): string => (v === undefined ? '(unset)' : typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The site fields of the plan that differ from the worker's profile of its cluster. Compared as
 * values: nothing the plan names is opened (a `hostKey` or `keyPath` of the input is never read).
 */
export function siteDifferences(plan: SweepPlan, profile: SiteProfile): Refusal[] {
  const out: Refusal[] = [];
  const at = `profile ${plan.cluster}`;
  const differ = (field: string, planned: unknown, own: unknown): void => {
    if (JSON.stringify(planned ?? null) !== JSON.stringify(own ?? null))
      out.push({ field, value: shown(planned), setting: 'clusters', allowed: `${at}: ${shown(own)}` });
  };
  const login = plan.login as Record<string, unknown>;
  const own = profile.loginHost as Record<string, unknown>;
  for (const k of ['local', 'host', 'port', 'user', 'keyPath', 'hostKey', 'knownHostsPath'])
    differ(`plan.login.${k}`, login[k], own[k]);
  differ('plan.slurm.partition', plan.slurm.partition, profile.partition);
  differ('plan.slurm.account', plan.slurm.account, profile.account);
  differ('plan.sharedDir', plan.sharedDir, profile.sharedDir);
  differ('plan.slurm.containerRuntime', plan.slurm.containerRuntime, profile.containerRuntime);
  differ('plan.slurm.mounts', plan.slurm.mounts, profile.mounts);
  differ('plan.slurm.squashDir', plan.slurm.squashDir, profile.squashDir);
  // the port of every allocated node the point's client sends requests to (DCGM exporters)
  differ('plan.gpuTelemetry', plan.gpuTelemetry, profile.gpuTelemetry);
  return out;
}

/** A tokenizer named as a directory of this host (absolute, `./`, `../`, or an existing relative directory: what the loader reads as local). */
function localTokenizerDir(t: string): string | undefined {
  if (isAbsolute(t) || /^\.{1,2}\//.test(t)) return resolve(t);
  try {
    return statSync(t).isDirectory() ? resolve(t) : undefined;
  } catch {
    return undefined;
  }
}

/** True when a tokenizer directory maps classes to its own Python (`auto_map` in its tokenizer or model config). */
export function tokenizerRunsCode(dir: string): boolean {
  for (const f of ['tokenizer_config.json', 'config.json']) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    } catch {
      continue; // absent or unreadable: aiperf fails on it without running code (no trust flag)
    }
    if (parsed !== null && typeof parsed === 'object' && 'auto_map' in parsed) return true;
  }
  return false;
}

/**
 * The tokenizer aiperf would load, when it is a directory of this host that runs its own code and the
 * worker does not trust it. A hub id is never trusted (aiperf gets no trust flag and refuses its code).
 */
function tokenizerRefusal(plan: SweepPlan, s: WorkerSettings): Refusal | undefined {
  if (plan.agentx.client !== 'aiperf') return undefined;
  const t = aiperfTokenizer(plan.agentx, plan.model.tokenizer, plan.model.servedName);
  const dir = localTokenizerDir(t);
  if (dir === undefined || s.trustRemoteCodeTokenizers.includes(dir) || !tokenizerRunsCode(dir)) return undefined;
  const field = plan.agentx.aiperf.tokenizer !== undefined ? 'plan.agentx.aiperf.tokenizer' : 'plan.model.tokenizer';
  return {
    field,
    value: t,
    setting: 'trustRemoteCodeTokenizers',
    why: 'the tokenizer maps classes to its own Python (auto_map)',
  };
}

/** A refusal of an executable, before the check: the setting is one of the executable lists. */
type Executable = Refusal & { setting: 'aiperfBinaries' | 'nodeBinaries' };

/**
 * Every executable the plan has the worker run and the setting that must list it: aiperf on the
 * worker's host (or under srun on the head node), and what each node and the P/D router launch.
 */
function executables(plan: SweepPlan): Executable[] {
  const aiperf: Executable[] =
    plan.agentx.client === 'aiperf'
      ? [{ field: 'plan.agentx.aiperf.binary', value: plan.agentx.aiperf.binary, setting: 'aiperfBinaries' }]
      : [];
  const onNodes = launchedExecutables(plan).map((e): Executable => ({
    field: e.field,
    value: e.executable,
    setting: 'nodeBinaries',
    why: `launched under srun ${e.where}, planned from ${e.plannedFrom}`,
  }));
  return [...aiperf, ...onNodes];
}

/** What the plan (and results folder) asks that the settings do not allow; empty: allowed. */
export function refusals(plan: SweepPlan, resultsDir: string | undefined, s: WorkerSettings): Refusal[] {
  const out: Refusal[] = [];
  const profile = Object.hasOwn(s.clusters, plan.cluster) ? s.clusters[plan.cluster] : undefined;
  if (profile === undefined)
    out.push({
      field: 'plan.cluster',
      value: plan.cluster,
      setting: 'clusters',
      allowed: Object.keys(s.clusters)
        .map((c) => JSON.stringify(c))
        .join(', '),
    });
  else out.push(...siteDifferences(plan, profile));
  for (const n of plan.secretEnv ?? [])
    if (!s.secretNames.includes(n)) out.push({ field: 'plan.secretEnv', value: n, setting: 'secretNames' });
  if (plan.secretsFile !== undefined && !s.secretsFiles.includes(resolve(plan.secretsFile)))
    out.push({ field: 'plan.secretsFile', value: plan.secretsFile, setting: 'secretsFiles' });
  for (const e of executables(plan)) if (!s[e.setting].includes(e.value)) out.push(e);
  const tokenizer = tokenizerRefusal(plan, s);
  if (tokenizer) out.push(tokenizer);
  if (resultsDir !== undefined && !s.resultsRoots.some((r) => isUnder(resultsDir, r)))
    out.push({ field: 'resultsDir', value: resultsDir, setting: 'resultsRoots' });
  return out;
}

/** What a setting allows, for a refusal's message. */
function allowedText(r: Refusal, s: WorkerSettings): string {
  if (r.allowed !== undefined) return r.allowed || 'none';
  const list = s[r.setting] as readonly string[];
  return list.length === 0 ? 'none' : list.map((v) => JSON.stringify(v)).join(', ');
}

/** Throws {@link RefusedInputError} listing every refusal: field, value, and the setting that would allow it. */
export function assertAllowed(
  plan: SweepPlan,
  resultsDir: string | undefined,
  s: WorkerSettings,
  env = process.env,
): void {
  const found = refusals(plan, resultsDir, s);
  if (found.length === 0) return;
  const lines = found.map(
    (r) =>
      `${r.field} = ${JSON.stringify(r.value)} is not allowed by this worker${r.why ? ` (${r.why})` : ''}: ${settingName(r.setting, env)} allows ${allowedText(r, s)}`,
  );
  throw new RefusedInputError(`the sweep input asks for what this worker does not allow: ${lines.join('; ')}`, {
    context: { step: 'prepare', refused: found.map((r) => r.field) },
  });
}

/**
 * What prepareSweep checks on the worker's host before any allocation: the login host's key and
 * known_hosts files of the worker's own profile as this worker sees them, and that every secret
 * resolves (the values are dropped here; launchServer resolves them again and hands them to srun
 * over stdin). Runs after {@link assertAllowed}: the plan's cluster is one of the worker's profiles.
 */
export function assertHostReady(plan: SweepPlan, s: WorkerSettings): void {
  const profile = s.clusters[plan.cluster];
  const issues = loginFileIssues(
    { loginHost: profile?.loginHost ?? { local: true }, secretsFile: plan.secretsFile },
    ['clusters', plan.cluster],
    localFileProbe,
  );
  if (issues.length > 0)
    throw new InputError(
      `on this worker's host: ${issues.map((i) => `${i.path} = ${i.value}: ${i.message}`).join('; ')}`,
      {
        context: { step: 'prepare' },
      },
    );
  resolveSecrets(plan.secretEnv ?? [], plan.secretsFile);
}
