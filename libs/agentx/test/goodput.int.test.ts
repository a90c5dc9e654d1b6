/**
 * Goodput against aiperf's own `--goodput` on the same requests: aiperf (PyPI 0.13, .tools/aiperf-venv)
 * runs a point against llm-d-inference-sim with `--goodput` set from the same bounds the record uses;
 * aiperf's good_request_count over its requests must equal the record's good requests computed by
 * libs/agentx `requestGoodput` from aiperf's per-request export (the definition is checked against
 * aiperf's code in goodput.test.ts). The bounds are fixed before the run: the simulator's TTFT is 50 ms
 * and its ITL 10 ms, so E2E ≈ 50 + 10·(OSL − 1) ms; the traces' output lengths (median ≈ 125 tokens)
 * put about half the requests under a 1500 ms E2E bound, so good and not-good requests both occur.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRequestRecords, requestGoodput, runAiperfPoint } from '@infersweep/agentx';
import { assertAiperfAvailable, simAiperfInput } from '@infersweep/testkit/aiperf-env';
import { startSim, type Sim } from '@infersweep/testkit/sim';

const BOUNDS = { attainment: 0.95, ttftMs: 200, tpotMs: 15, e2elMs: 1500 };

/** A metric's value in aiperf's profile_export_aiperf.json (`{ unit, avg, … }` per metric tag). */
function aiperfCount(agg: Record<string, unknown>, tag: string): number {
  const m = agg[tag] as { avg?: number } | undefined;
  if (m?.avg === undefined) throw new Error(`aiperf export has no ${tag}: ${Object.keys(agg).join(', ')}`);
  return m.avg;
}

describe('goodput: the record against aiperf --goodput on the same requests', () => {
  let sim: Sim;
  beforeAll(async () => {
    assertAiperfAvailable();
    sim = await startSim({ ttft: '50ms', itl: '10ms', maxModelLen: 16384 });
  });
  afterAll(async () => sim?.stop());

  it('aiperf good_request_count / requests equals the record goodput attainment', async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'agentx-goodput-'));
    const r = await runAiperfPoint(
      simAiperfInput(sim.url, outDir, { concurrency: 8, profileDurationSeconds: 20, goodput: BOUNDS }),
    );
    expect(r.aiperf.exitCode).toBe(0);
    expect(readFileSync(join(outDir, 'benchmark_command.txt'), 'utf8')).toContain(
      "--goodput 'time_to_first_token:200 inter_token_latency:15 request_latency:1500'",
    );
    const agg = JSON.parse(readFileSync(join(outDir, 'aiperf_artifacts', 'profile_export_aiperf.json'), 'utf8'));
    const good = aiperfCount(agg, 'good_request_count');
    // aiperf writes error_request_count only when a request failed
    const total = aiperfCount(agg, 'request_count') + (agg.error_request_count?.avg ?? 0);
    const g = r.goodput!;
    console.log(`goodput: record ${g.good_requests}/${g.profiled_requests}, aiperf ${good}/${total}`);
    expect(g.good_requests).toBe(good);
    expect(g.profiled_requests).toBe(total);
    expect(Math.abs(g.attainment! - good / total)).toBeLessThanOrEqual(0.01);
    // not degenerate: the bound splits the requests
    expect(good).toBeGreaterThan(0);
    expect(good).toBeLessThan(total);
    // the same figure from the per-request file the record points at
    expect(requestGoodput(readRequestRecords(join(outDir, 'requests.jsonl')), BOUNDS).good_requests).toBe(good);
  });
});
