/**
 * prepareSweep's completed-point detection (../src/activities/results-store.ts storedResult) on a
 * real folder: a point counts as measured only by its published `points/c<N>/result.json`, never by
 * the `.partial-` folder a dead attempt leaves (libs/agentx/src/point.ts).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ResultsLayout } from '@infersweep/core';
import { claimResultsDir, storedResult } from '../src/activities/results-store';
import { RefusedInputError } from '../src/activities/input-checks';
import { POINT_RECORD_FILE } from '@infersweep/testkit/runs-fixture';

/** A record the real point activity wrote (it validates against libs/agentx's pointResultSchema). */
const real = JSON.parse(readFileSync(POINT_RECORD_FILE, 'utf8')) as {
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

  it('a mixed-version rollout: a record a newer worker wrote (extra fields) is reused, and stays as written', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'infersweep-store-'));
    const layout = new ResultsLayout(resultsDir);
    mkdirSync(layout.pointDir(2), { recursive: true });
    const text = JSON.stringify({
      ...real,
      conc: 2,
      writtenByNewerWorker: { schemaAddition: 1 },
      identity: { ...real.identity, shard: 'x' },
    });
    writeFileSync(layout.pointRecord(2), text);
    const reused = await new MockActivityEnvironment().run(() => storedResult(resultsDir, sweepId, planHash, 2));
    expect(reused).toMatchObject({ concurrency: 2, valid: true, reused: true });
    expect(readFileSync(layout.pointRecord(2), 'utf8')).toBe(text);
  });

  it('a record of another shape is not reused and is left in place (the re-measured point supersedes it)', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'infersweep-store-'));
    const layout = new ResultsLayout(resultsDir);
    mkdirSync(layout.pointDir(2), { recursive: true });
    const text = JSON.stringify({ ...real, conc: 2, identity: 'renamed in another version' });
    writeFileSync(layout.pointRecord(2), text);
    expect(
      await new MockActivityEnvironment().run(() => storedResult(resultsDir, sweepId, planHash, 2)),
    ).toBeUndefined();
    expect(readFileSync(layout.pointRecord(2), 'utf8')).toBe(text);
  });
});

describe('a results folder belongs to one sweep id', () => {
  it('the first sweep claims it; the same sweep again passes; another is refused, naming the owner, and nothing is written', async () => {
    const resultsDir = join(mkdtempSync(join(tmpdir(), 'infersweep-owner-')), 'sweep-a');
    const layout = new ResultsLayout(resultsDir);
    await claimResultsDir(resultsDir, 'sweep-a');
    expect(readFileSync(layout.ownerFile, 'utf8')).toBe('sweep-a\n');
    await claimResultsDir(resultsDir, 'sweep-a'); // a resume, a continue-as-new
    const refused = claimResultsDir(resultsDir, 'sweep-b');
    await expect(refused).rejects.toBeInstanceOf(RefusedInputError);
    await expect(claimResultsDir(resultsDir, 'sweep-b')).rejects.toThrow(
      `resultsDir = "${resultsDir}" belongs to sweep "sweep-a"`,
    );
    expect(readFileSync(layout.ownerFile, 'utf8')).toBe('sweep-a\n');
  });

  it('an owner file that holds no sweep id is not quoted (it may be a link to any file)', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'infersweep-owner-'));
    writeFileSync(new ResultsLayout(resultsDir).ownerFile, 'HF_TOKEN=hf_secret_value\n');
    const err = await claimResultsDir(resultsDir, 'sweep-b').catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(RefusedInputError);
    expect((err as Error).message).toContain('belongs to another sweep');
    expect((err as Error).message).not.toContain('hf_secret_value');
  });
});
