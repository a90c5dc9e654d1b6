/**
 * The worker trusts no sweep input: what a sweep asks of the worker's host (its cluster profile,
 * secret names, secrets file, aiperf executable, results folder) must be allowed by the worker's
 * own settings (../worker-settings.ts). Checked at prepareSweep, before any allocation, and again
 * whenever an activity opens a plan (an inline plan of an old history, or a plan.json edited on
 * disk, gets no more than prepareSweep would allow). Each refusal names the field, the value and
 * the setting that would allow it.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { InputError } from '@infersweep/core';
import { loginFileIssues, type SweepPlan } from '@infersweep/topology';
import { localFileProbe, resolveSecrets } from '@infersweep/slurm';
import { settingName, type WorkerSettingKey, type WorkerSettings } from '../worker-settings';

/** A sweep input asks for something the worker's settings do not allow (never retried). */
export class RefusedInputError extends InputError {
  override readonly name = 'RefusedInputError';
}

export interface Refusal {
  field: string;
  value: string;
  setting: WorkerSettingKey;
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

/** What the plan (and results folder) asks that the settings do not allow; empty: allowed. */
export function refusals(plan: SweepPlan, resultsDir: string | undefined, s: WorkerSettings): Refusal[] {
  const out: Refusal[] = [];
  if (!s.clusters.includes(plan.cluster)) out.push({ field: 'plan.cluster', value: plan.cluster, setting: 'clusters' });
  for (const n of plan.secretEnv ?? [])
    if (!s.secretNames.includes(n)) out.push({ field: 'plan.secretEnv', value: n, setting: 'secretNames' });
  if (plan.secretsFile !== undefined && !s.secretsFiles.includes(resolve(plan.secretsFile)))
    out.push({ field: 'plan.secretsFile', value: plan.secretsFile, setting: 'secretsFiles' });
  if (plan.agentx.client === 'aiperf' && !s.aiperfBinaries.includes(plan.agentx.aiperf.binary))
    out.push({ field: 'plan.agentx.aiperf.binary', value: plan.agentx.aiperf.binary, setting: 'aiperfBinaries' });
  if (resultsDir !== undefined && !s.resultsRoots.some((r) => isUnder(resultsDir, r)))
    out.push({ field: 'resultsDir', value: resultsDir, setting: 'resultsRoots' });
  return out;
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
      `${r.field} = ${JSON.stringify(r.value)} is not allowed by this worker: ${settingName(r.setting, env)} allows ${
        s[r.setting].length === 0 ? 'none' : s[r.setting].map((v) => JSON.stringify(v)).join(', ')
      }`,
  );
  throw new RefusedInputError(`the sweep input asks for what this worker does not allow: ${lines.join('; ')}`, {
    context: { step: 'prepare', refused: found.map((r) => r.field) },
  });
}

/**
 * What prepareSweep checks on the worker's host before any allocation: the login host's key and
 * known_hosts files as this worker sees them, and that every secret resolves (the values are
 * dropped here; launchServer resolves them again and hands them to srun over stdin).
 */
export function assertHostReady(plan: SweepPlan): void {
  const issues = loginFileIssues(
    { loginHost: plan.login, secretsFile: plan.secretsFile },
    ['plan', 'login'],
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
