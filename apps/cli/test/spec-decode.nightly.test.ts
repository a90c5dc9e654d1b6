/**
 * Speculative decoding on the real vLLM CPU engine, nightly: the `spec-ngram` orientation of
 * configs/tiny-moe-local-vllm.yaml (ngram prompt lookup, 3 speculative tokens, no draft model; greedy, so
 * the random-weight model's looping output gives drafts that hit) swept at c=1 and c=2 through the
 * production workflow and activities. Each point record carries the spec-decode block computed from the
 * engine's own counters over the profiling window (libs/agentx/src/server/spec-decode.ts), and the
 * report (the same code as `infersweep report`) and `status` show its acceptance length. One vLLM at a time (~5 GB).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { planSweep } from '@infersweep/topology';
import type { SweepResult } from '@infersweep/sweep';
import { CLUSTER_CONFIGS, loadSweepConfig } from '@infersweep/orchestrator';
import { toolsDir } from '@infersweep/testkit/stack';
import {
  liveJobsOf,
  localSlurm,
  readPoint,
  realStackSuite,
  startOnNewWorker,
  testInput,
} from '@infersweep/testkit/sweep-harness';
import { loadSweepResults } from '../src/report/records';
import { renderReport, toCsv } from '../src/report/html';
import { fmtNum } from '../src/report/chart';
import { pointLine } from '../src/ops/render';

const CLUSTER = 'local-vllm';
const ORIENTATION = 'spec-ngram';
const POINTS = [1, 2];
const slurm = localSlurm();

beforeAll(() => {
  if (!existsSync(join(toolsDir, 'vllm-venv', 'bin', 'vllm')))
    throw new Error(`no vLLM at ${toolsDir}/vllm-venv: run npm run setup (scripts/setup-vllm.sh)`);
});
const suite = realStackSuite(slurm);

describe('speculative decoding on the real vLLM CPU engine', () => {
  it('spec-ngram at c=1 and c=2: each valid point reports drafts, acceptance length in [1, 1 + k] and rate in [0, 1] from the engine counters; the report shows the length', async () => {
    const { config, source } = loadSweepConfig({ config: CLUSTER_CONFIGS[CLUSTER], clusters: [CLUSTER] });
    const plan = planSweep(config, { orientation: ORIENTATION, cluster: CLUSTER, points: POINTS, source });
    expect(plan.engine.launch).toBe('vllm-cpu');
    expect(plan.speculative).toMatchObject({ method: 'ngram', numSpeculativeTokens: 3 });
    const k = plan.speculative!.numSpeculativeTokens!;
    const input = testInput(plan, `vllm-${ORIENTATION}`);
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    const result = (await worker.runUntil(h.result())) as SweepResult;

    expect(result.status, JSON.stringify(result.points)).toBe('completed');
    expect(result.allocations).toHaveLength(1);
    expect(result.allocations[0]!.ended).toBe('released');
    const lengths = new Map<number, number>();
    for (const c of POINTS) {
      const r = readPoint(input.resultsDir, c);
      expect(r.submission_invalid_reasons, `c=${c}`).toEqual([]);
      expect(r.submission_valid).toBe(true);
      const sd = r.server_metrics.spec_decode;
      expect(sd, `c=${c}: no spec-decode block`).toBeDefined();
      // the engine drafted in the window: per draft at most k proposed tokens, each accepted at most once
      expect(sd!.drafts).toBeGreaterThan(0);
      expect(sd!.draft_tokens).toBeGreaterThan(0);
      expect(sd!.draft_tokens).toBeLessThanOrEqual(k * sd!.drafts);
      expect(sd!.accepted_tokens).toBeLessThanOrEqual(sd!.draft_tokens);
      // vLLM's definitions (compute_acceptance_len / compute_acceptance_rate) over the window's deltas
      expect(sd!.acceptance_length).toBeCloseTo(1 + sd!.accepted_tokens / sd!.drafts, 12);
      expect(sd!.acceptance_length!).toBeGreaterThanOrEqual(1);
      expect(sd!.acceptance_length!).toBeLessThanOrEqual(1 + k);
      expect(sd!.acceptance_rate).toBeCloseTo(sd!.accepted_tokens / sd!.draft_tokens, 12);
      expect(sd!.acceptance_rate!).toBeGreaterThanOrEqual(0);
      expect(sd!.acceptance_rate!).toBeLessThanOrEqual(1);
      // one rate per speculative position, each a share of the drafts
      expect(sd!.per_position_rate).toHaveLength(k);
      for (const p of sd!.per_position_rate) expect(p).toBeGreaterThanOrEqual(0);
      for (const p of sd!.per_position_rate) expect(p).toBeLessThanOrEqual(1);
      // no recipe target for ngram: the length is reported, no drift warning
      expect(r.warnings.filter((w) => /speculative decoding/.test(w))).toEqual([]);
      lengths.set(c, sd!.acceptance_length!);
    }
    console.log(`spec-ngram acceptance length: ${POINTS.map((c) => `c=${c} ${lengths.get(c)}`).join(', ')}`);

    // status: the workflow's point summaries carry the length and `status` prints it (../src/ops/render.ts pointLine)
    for (const pt of result.points) {
      expect(pt.summary?.specAcceptanceLength).toBe(lengths.get(pt.concurrency));
      expect(pointLine(pt)).toContain(`acceptance length ${lengths.get(pt.concurrency)!.toFixed(2)}`);
    }

    // the report: the acceptance length in each point's row of the HTML table and in the CSV column
    const sweep = loadSweepResults(input.resultsDir, undefined, input.sweepId);
    expect(sweep.points.map((p) => p.specAcceptanceLength)).toEqual(POINTS.map((c) => lengths.get(c)));
    const html = renderReport({ sweeps: [sweep], outDir: input.resultsDir });
    for (const c of POINTS) {
      const row = html.split(`data-concurrency="${c}">`)[1]!.split('</tr>')[0]!;
      expect(row).toContain(`<td class="num">${fmtNum(lengths.get(c)!)}</td>`);
    }
    // counted from the end: the numeric energy columns follow it, a quoted reasons cell may hold commas
    const [header, ...rows] = toCsv([sweep]).trimEnd().split('\r\n');
    const names = header!.split(',');
    const fromEnd = names.length - names.indexOf('spec_acceptance_length');
    expect(fromEnd).toBeLessThan(names.length);
    expect(rows.map((l) => Number(l.split(',').at(-fromEnd)))).toEqual(POINTS.map((c) => lengths.get(c)));

    expect(
      await liveJobsOf(
        slurm,
        result.allocations.map((a) => a.jobName),
      ),
    ).toEqual([]);
  }, 1_200_000);
});
