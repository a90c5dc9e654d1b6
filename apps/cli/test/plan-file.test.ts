/** `plan.json` has one reader, through libs/topology's sweepPlanSchema: the report and the InferenceX export. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ResultsLayout } from '@infersweep/core';
import { readPlanFile } from '../src/report/plan-file';
import { loadSweepResults } from '../src/report/records';
import { writeInferencex } from '../src/report/inferencex';
import { tempRoot, writeSweep } from './fixtures/sweep-results';

const sweep = (id: string) =>
  writeSweep(tempRoot(), {
    sweepId: id,
    orientation: 'balanced',
    points: [{ concurrency: 4, valid: true, tputPerGpu: 300, interactivity: 80 }],
  });

describe('readPlanFile', () => {
  it('a plan written by planSweep reads back typed, and the report shows it without the workflow', () => {
    const { dir } = sweep('sweep-plan-ok');
    const { plan, problem } = readPlanFile(dir);
    expect(problem).toBeNull();
    expect(plan?.topology.gpus).toBeGreaterThan(0);
    const r = loadSweepResults(dir);
    expect(r.source).toBe('files');
    expect([r.model, r.cluster, r.configName, r.gpus]).toEqual([
      plan!.model.servedName,
      'local-vllm',
      plan!.sweep,
      plan!.topology.gpus,
    ]);
    expect(r.topology).toBe(
      `TP${plan!.topology.tp} PP${plan!.topology.pp} DP${plan!.topology.dp} EP${plan!.topology.ep} · ${plan!.topology.nodes} node(s) × ${plan!.topology.gpusPerNode} GPUs`,
    );
  });

  it('a file that is not a plan is no plan, with the field that failed; the report falls back, the export skips', () => {
    const { dir } = sweep('sweep-plan-partial');
    const file = new ResultsLayout(dir).planFile;
    const { topology: _dropped, ...partial } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify(partial));
    const read = readPlanFile(dir);
    expect(read.plan).toBeNull();
    expect(read.problem).toContain('is not a sweep plan (topology:');
    const r = loadSweepResults(dir);
    expect([r.topology, r.gpus, r.image, r.model]).toEqual([null, null, null, '?']);
    const { written, skipped } = writeInferencex([r], join(dir, 'ix'));
    expect(written).toEqual([]);
    expect(skipped).toEqual([`sweep-plan-partial: ${read.problem} (the plan supplies hw, precision and topology)`]);
  });

  it('a missing or unparseable file says which', () => {
    const { dir } = sweep('sweep-plan-missing');
    const file = new ResultsLayout(dir).planFile;
    writeFileSync(file, '{ not json');
    expect(readPlanFile(dir).problem).toMatch(/is not JSON/);
    rmSync(file);
    expect(readPlanFile(dir)).toEqual({ plan: null, problem: `no ${file}` });
  });
});
