import { describe, expect, it } from 'vitest';
import { pointEnergy, pointResultSchema } from '@infersweep/agentx';
import { rowFromRecord } from '../src/report/records';
import { renderReport, toCsv } from '../src/report/html';
import { pointRecord, resultsOf } from './fixtures/sweep-results';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a record's nested blocks, edited in place
type Loose = Record<string, any>;
/** Two GPUs at 500 W for the 2-s window: 2000 J for 2000 tokens; $7.20 per GPU-hour. */
const energy = (gpus = 2) =>
  pointEnergy({
    source: 'nvidia-smi',
    samples: [0, 1].flatMap((g) => [0, 1, 2].map((t) => ({ gpu: `n/${g}`, t, watts: 500 }))),
    window: { start: 0, end: 2 },
    gpus,
    tokens: { input: 1500, output: 500, requests: 4 },
    pricePerGpuHour: 7.2,
  });
function record(withEnergy: ReturnType<typeof energy> | undefined) {
  const r = pointRecord('s', 'ix-latency', { concurrency: 2, valid: true, tputPerGpu: 10, interactivity: 5 }) as Loose;
  r.server_metrics = {
    ...r.server_metrics,
    spec_decode: {
      drafts: 96,
      draft_tokens: 276,
      accepted_tokens: 276,
      acceptance_length: 3.875,
      acceptance_rate: 1,
      per_position_rate: [1, 1, 0.875],
    },
  };
  if (withEnergy) r.energy = withEnergy;
  return pointResultSchema.parse(r);
}
const sweep = (points: ReturnType<typeof rowFromRecord>[]) => resultsOf(points, 'ix-latency', 'h200');

describe('energy, cost and speculative acceptance in results and the report', () => {
  it('a record with energy: J/token, tokens/s/MW, $/M tokens and the acceptance length in the row, CSV and HTML', () => {
    const row = rowFromRecord(record(energy()), null);
    expect(row.specAcceptanceLength).toBe(3.875);
    expect(row.energy).toEqual({
      powerValid: true,
      joulesPerToken: 1,
      // 1000 tok/s at 1000 W = 0.001 MW
      tokensPerSecondPerMw: 1_000_000,
      // 2 GPUs × 2 s at $7.20/h = $0.008 for 2000 tokens
      dollarsPerMillionTokens: 4,
    });
    const csv = toCsv([sweep([row])])
      .trimEnd()
      .split('\r\n');
    expect(csv[0]).toMatch(
      /,spec_acceptance_length,power_valid,joules_per_token,tokens_per_s_per_mw,usd_per_m_tokens$/,
    );
    expect(csv[1]).toMatch(/,3\.875,true,1,1000000,4$/);
    const html = renderReport({ sweeps: [sweep([row])], outDir: '/r' });
    expect(html).toContain('J/token · tok/s/MW</th>');
    // fmtNum (report/chart.ts) shows 1,000,000 as 1000k; the $/M cell follows
    expect(html).toContain('<td class="num">1 · 1000k</td><td class="num">4</td>');
  });

  it('invalid power shows as invalid, never as a number; no telemetry is empty', () => {
    const bad = rowFromRecord(record(energy(8)), null);
    expect(bad.energy).toMatchObject({ powerValid: false, joulesPerToken: null, tokensPerSecondPerMw: null });
    expect(renderReport({ sweeps: [sweep([bad])], outDir: '/r' })).toContain('>invalid</span>');
    const none = rowFromRecord(record(undefined), null);
    expect(none.energy).toBeNull();
    expect(
      toCsv([sweep([none])])
        .trimEnd()
        .split('\r\n')[1],
    ).toMatch(/,3\.875,,,,$/);
  });
});
