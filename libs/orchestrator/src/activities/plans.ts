/**
 * The plan an activity works from. The workflow passes the whole plan once, to prepareSweep, which
 * stores it as `<resultsDir>/plan.json`; every later activity gets a {@link PlanRef} (planHash +
 * resultsDir, a few dozen bytes instead of ~11 KB per history event) and reads the stored plan,
 * checked against its hash and cached per worker.
 */
import { readFile } from 'node:fs/promises';
import { ResultsLayout } from '@infersweep/core';
import { sweepPlanSchema, type SweepPlan } from '@infersweep/topology';
import type { PlanInput } from './types';
import { InvalidPlanError, PlanUnreadableError } from './errors';

/** Reads of the stored plan tried this many times, this far apart, before the attempt fails (retryable). */
export const PLAN_READ_TRIES = 3;
export const PLAN_READ_GAP_MS = 2000;

export function parsePlan(plan: unknown, where = 'the sweep plan'): SweepPlan {
  const r = sweepPlanSchema.safeParse(plan);
  if (!r.success)
    throw new InvalidPlanError(
      `${where} does not validate: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

export class PlanStore {
  private readonly cache = new Map<string, SweepPlan>();

  constructor(
    private readonly tries = PLAN_READ_TRIES,
    private readonly gapMs = PLAN_READ_GAP_MS,
  ) {}

  /** The validated plan of an activity input: the stored plan.json it refers to. */
  async resolve({ planRef }: PlanInput): Promise<SweepPlan> {
    const { planHash, resultsDir } = planRef;
    const key = `${planHash}:${resultsDir}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const file = new ResultsLayout(resultsDir).planFile;
    const text = await this.readWithRetries(file);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // the parser's message quotes the text: never echo a file's content
      throw new InvalidPlanError(`the stored plan ${file} is not JSON`);
    }
    const plan = parsePlan(json, file);
    if (plan.planHash !== planHash)
      throw new InvalidPlanError(
        `${file} holds plan ${plan.planHash}, the sweep runs plan ${planHash}: the results folder was reused by another plan`,
      );
    this.cache.set(key, plan);
    return plan;
  }

  /** A read error (missing included: prepareSweep wrote it) is a blip of shared storage until proven otherwise. */
  private async readWithRetries(file: string): Promise<string> {
    let last: Error | undefined;
    for (let i = 0; i < this.tries; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, this.gapMs));
      try {
        return await readFile(file, 'utf8');
      } catch (e) {
        last = e as Error;
      }
    }
    throw new PlanUnreadableError(
      `the stored plan ${file} cannot be read (${last?.message ?? 'unknown error'}, ${this.tries} tries): retried; the results folder must be on storage this worker sees`,
      { step: 'plan' },
    );
  }
}
