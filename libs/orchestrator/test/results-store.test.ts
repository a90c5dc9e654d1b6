/**
 * prepareSweep's completed-point detection (../src/activities/results-store.ts storedResult) on a
 * real folder: a point counts as measured only by its published `points/c<N>/result.json`, never by
 * the `.partial-` folder a dead attempt leaves (libs/agentx/src/point.ts).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResultsLayout } from '@infersweep/core';
import { storedResult } from '../src/activities/results-store';

/** A record the real point activity wrote (it validates against libs/agentx's pointResultSchema). */
const real = JSON.parse(readFileSync(join(__dirname, '../../../apps/cli/test/fixtures/point-record.json'), 'utf8')) as {
  conc: number;
  submission_valid: boolean;
  identity: { sweepId: string; planHash: string };
};
const { sweepId, planHash } = real.identity;

describe('prepareSweep: completed points on disk', () => {
  it('a published point counts; a `.partial-` attempt folder does not, and is left as it is', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'infersweep-store-'));
    const layout = new ResultsLayout(resultsDir);
    const write = (folder: string, conc: number) => {
      mkdirSync(join(layout.pointsDir, folder), { recursive: true });
      writeFileSync(join(layout.pointsDir, folder, 'result.json'), JSON.stringify({ ...real, conc }));
    };
    expect(real.submission_valid).toBe(true);
    write('c1', 1);
    write('c4.partial-abcd1234', 4);
    const c1 = await storedResult(resultsDir, sweepId, planHash, 1);
    expect(c1).toMatchObject({ concurrency: 1, valid: true, reused: true, resultPath: layout.pointRecord(1) });
    expect(await storedResult(resultsDir, sweepId, planHash, 4)).toBeUndefined();
    expect(existsSync(join(layout.pointsDir, 'c4.partial-abcd1234', 'result.json'))).toBe(true);
    expect(existsSync(layout.pointDir(4))).toBe(false);
  });
});
