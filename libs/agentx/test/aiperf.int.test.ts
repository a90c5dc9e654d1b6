import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pointResultSchema, readRequestRecords, runAiperfPoint } from '@infersweep/agentx';
import { assertAiperfAvailable, simAiperfInput } from '@infersweep/testkit/aiperf-env';
import { startSim, type Sim } from '@infersweep/testkit/sim';

describe('runAiperfPoint: a real aiperf run against llm-d-inference-sim', () => {
  let sim: Sim;
  beforeAll(async () => {
    assertAiperfAvailable();
    sim = await startSim({ ttft: '50ms', itl: '10ms', maxModelLen: 16384 });
  });
  afterAll(async () => sim?.stop());

  it('persists the argv, runs aiperf and produces the same PointResult shape', async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'agentx-aiperf-'));
    const r = await runAiperfPoint(simAiperfInput(sim.url, outDir, { concurrency: 2, profileDurationSeconds: 8 }));
    expect(r.aiperf.exitCode).toBe(0);
    const cmd = readFileSync(join(outDir, 'benchmark_command.txt'), 'utf8');
    expect(cmd).toContain('profile --scenario inferencex-agentx-mvp');
    expect(existsSync(join(outDir, 'aiperf_artifacts', 'profile_export_aiperf.json'))).toBe(true);
    const onDisk = pointResultSchema.parse(JSON.parse(readFileSync(join(outDir, 'result.json'), 'utf8')));
    expect(onDisk.client.name).toBe('aiperf');
    expect(onDisk.num_requests_successful).toBeGreaterThan(0);
    expect(onDisk.request_metrics.latency.ttft.mean!).toBeGreaterThan(0.045);
    expect(onDisk.submission_valid).toBe(false);
    expect(onDisk.submission_invalid_reasons).toContain('aiperf:unsafe_override');
    // every line a valid request record
    expect(readRequestRecords(join(outDir, 'requests.jsonl')).length).toBeGreaterThan(0);
  });
});
