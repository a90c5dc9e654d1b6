/**
 * Planning for commands that start sweeps (`sweep`, `schedule create`): the plans `plan` would
 * print and the config's content hash; a bad config is a usage error (exit 2) with the same
 * message `plan` prints, and nothing is started.
 */
import { readFileSync } from 'node:fs';
import { fnv1a64, InfersweepError, type SweepPlan } from '@infersweep/topology';
import { resolveConfigPath } from '../config-file';
import { makePlans, type PlanCliOptions } from '../commands/plan';
import { EXIT, ExitWith } from './cli';

export function plansOrUsageError(opts: PlanCliOptions & { config: string }): { plans: SweepPlan[]; configHash: string } {
  let plans: SweepPlan[];
  try {
    plans = makePlans(opts);
  } catch (e) {
    if (e instanceof InfersweepError) throw new ExitWith(EXIT.usage, e.message.includes('\n') ? `\n${e.message}` : e.message);
    throw e;
  }
  return { plans, configHash: fnv1a64(readFileSync(resolveConfigPath(opts.config), 'utf8')) };
}
