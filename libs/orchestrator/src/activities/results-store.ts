/**
 * The results store: a sweep's folder on shared storage (libs/core ResultsLayout). It finds the
 * points an earlier run of the same sweep and plan already measured, and stores the plan that
 * later activities read by reference (./plans.ts).
 */
import { log } from '@temporalio/activity';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ResultsLayout } from '@infersweep/core';
import { pointResultSchema, pointSummary, readRecordFile } from '@infersweep/agentx';
import type { PointSummary } from '@infersweep/sweep';
import type { ActivityContext } from './context';
import { RefusedInputError, assertAllowed, assertHostReady } from './input-checks';
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

/** What an owner file may say and be shown: a sweep id, nothing else of a file's content. */
const SWEEP_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,250}$/;

/**
 * Make `resultsDir` the folder of `sweepId`: the first prepareSweep of a folder writes its owner file
 * (exclusive create, so two sweeps racing for one folder cannot both win); a later one passes only for
 * the same sweep id (a resume, a continue-as-new, a rerun). Another sweep's folder is refused before
 * anything in it is read or written: its plan and points stay as they are, and so does the sweep.
 */
export async function claimResultsDir(resultsDir: string, sweepId: string): Promise<void> {
  const file = new ResultsLayout(resultsDir).ownerFile;
  await mkdir(resultsDir, { recursive: true });
  try {
    await writeFile(file, `${sweepId}\n`, { flag: 'wx' });
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const owner = (await readFile(file, 'utf8')).trim();
  if (owner === sweepId) return;
  const whose = SWEEP_ID.test(owner) ? `sweep ${JSON.stringify(owner)}` : 'another sweep';
  throw new RefusedInputError(
    `resultsDir = ${JSON.stringify(resultsDir)} belongs to ${whose} (${file}); a sweep writes only its own results folder: give this sweep a folder of its own (the CLI's default is <results root>/<sweep id>)`,
    { context: { step: 'prepare', refused: ['resultsDir'] } },
  );
}

export function resultsActivities(ctx: ActivityContext): ResultsActivities {
  return {
    async prepareSweep({ sweepId, planHash, plan, resultsDir, points }) {
      const valid = parsePlan(plan);
      // before anything is written or allocated: the input asks only what this worker allows, for
      // the sweep of the workflow asking, and this worker's host has the login files and every
      // secret (found now, not after the queue wait)
      ctx.assertOwnSweep(sweepId);
      assertAllowed(valid, resultsDir, ctx.deps.settings);
      assertHostReady(valid, ctx.deps.settings);
      await claimResultsDir(resultsDir, sweepId);
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
