/**
 * The results store: a sweep's folder on shared storage (libs/core ResultsLayout). It finds the
 * points an earlier run of the same sweep and plan already measured, and stores the plan that
 * later activities read by reference (./plans.ts).
 */
import { log } from '@temporalio/activity';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ResultsLayout } from '@infersweep/core';
import { pointResultSchema, pointSummary, readRecordFile } from '@infersweep/agentx';
import type { PointSummary } from '@infersweep/sweep';
import type { ActivityContext } from './context';
import { assertAllowed, assertHostReady } from './input-checks';
import { parsePlan } from './plans';
import type { ResultsActivities } from './types';

/**
 * A stored result of this point for this sweep and this plan, if one exists and is valid. A record a
 * newer worker wrote is read without its unknown fields (a rolling deploy keeps valid results); a
 * record of another shape is left in place and re-measured; unreadable JSON is moved aside with a
 * warning: none of them blocks a resume.
 */
export async function storedResult(
  resultsDir: string,
  sweepId: string,
  planHash: string,
  concurrency: number,
): Promise<PointSummary | undefined> {
  const file = new ResultsLayout(resultsDir).pointRecord(concurrency);
  const stored = readRecordFile(file, pointResultSchema);
  if (stored.kind === 'corrupt' || stored.kind === 'unusable') log.warn(stored.warning, { concurrency });
  if (stored.kind === 'ok' && stored.ignored)
    log.info(`${file}: fields of a newer version ignored`, { ignored: stored.ignored });
  if (stored.kind !== 'ok') return undefined;
  const r = stored.record;
  if (r.identity.sweepId !== sweepId || r.identity.planHash !== planHash || !r.submission_valid) return undefined;
  return pointSummary(r, { resultPath: file, reused: true });
}

async function writeAtomic(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

export function resultsActivities(ctx: ActivityContext): ResultsActivities {
  return {
    async prepareSweep({ sweepId, planHash, plan, resultsDir, points }) {
      const valid = parsePlan(plan);
      // before anything is written or allocated: the input asks only what this worker allows, and
      // this worker's host has the login files and every secret (found now, not after the queue wait)
      assertAllowed(valid, resultsDir, ctx.deps.settings);
      assertHostReady(valid);
      const found: PointSummary[] = [];
      for (const c of points) {
        const s = await storedResult(resultsDir, sweepId, planHash, c);
        if (s) found.push(s);
      }
      await writeAtomic(new ResultsLayout(resultsDir).planFile, JSON.stringify(valid, null, 2));
      return found;
    },
  };
}
