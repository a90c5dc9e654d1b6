/**
 * Planning for commands that start sweeps (`sweep`, `schedule create`): the plans `plan` would
 * print and the config's content hash; a bad config is a usage error (exit 2) with the same
 * message `plan` prints, and nothing is started.
 */
import { readFileSync } from 'node:fs';
import { type SweepPlan } from '@infersweep/topology';
import { fnv1a64, InfersweepError } from '@infersweep/core';
import { configFileFor, DEFAULT_CLUSTER, resolveConfigPath } from '@infersweep/orchestrator';
import { isAbsolute } from 'node:path';
import { checkSite, makePlans, type PlanCliOptions } from '../commands/plan';
import { EXIT, ExitWith } from './cli';

export function plansOrUsageError(opts: PlanCliOptions & { config: string }): { plans: SweepPlan[]; configHash: string } {
  let plans: SweepPlan[];
  const data = process.env.INFERSWEEP_DATA;
  if (data !== undefined && !isAbsolute(data)) {
    throw new ExitWith(
      EXIT.usage,
      `INFERSWEEP_DATA=${JSON.stringify(data)}: the results root must be an absolute path (the worker resolves it from its own working directory otherwise)`,
    );
  }
  try {
    plans = makePlans(opts);
    checkSite(opts, true);
  } catch (e) {
    if (e instanceof InfersweepError) throw new ExitWith(EXIT.usage, e.message.includes('\n') ? `\n${e.message}` : e.message);
    throw e;
  }
  return {
    plans,
    configHash: fnv1a64(readFileSync(resolveConfigPath(configFileFor(opts.config, [opts.cluster ?? DEFAULT_CLUSTER])), 'utf8')),
  };
}
