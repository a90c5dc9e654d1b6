/**
 * The plan a sweep's results folder holds (`plan.json`, libs/core ResultsLayout `planFile`), read
 * through its schema (libs/topology `sweepPlanSchema`): the one reader of the file for `results`,
 * `report` and the InferenceX export. A file that is missing, not JSON or not a plan is no plan,
 * with the reason.
 */
import { existsSync, readFileSync } from 'node:fs';
import { ResultsLayout } from '@infersweep/core';
import { sweepPlanSchema, type SweepPlan } from '@infersweep/topology';

export type PlanFile = { plan: SweepPlan; problem: null } | { plan: null; problem: string };

export function readPlanFile(resultsDir: string): PlanFile {
  const file = new ResultsLayout(resultsDir).planFile;
  if (!existsSync(file)) return { plan: null, problem: `no ${file}` };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { plan: null, problem: `${file} is not JSON: ${(err as Error).message}` };
  }
  const r = sweepPlanSchema.safeParse(raw);
  if (r.success) return { plan: r.data, problem: null };
  const issue = r.error.issues[0];
  return {
    plan: null,
    problem: `${file} is not a sweep plan (${issue?.path.join('.') || '(plan)'}: ${issue?.message})`,
  };
}
