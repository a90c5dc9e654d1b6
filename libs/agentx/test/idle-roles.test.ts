import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkRoles,
  idleRoleMessages,
  parsePrometheus,
  servedPerEngine,
  type EndpointSnapshot,
} from '@infersweep/agentx';
import { data, recordedAiperfPoint } from './aiperf-fixture';

/** The real DP=2 vLLM scrape under load (its header), standing for a worker that served requests. */
const busy = parsePrometheus(
  readFileSync(new URL('./data/vllm-dp2-metrics-load.txt', import.meta.url), 'utf8'),
).samples;
const zeroed = busy.map((s) => (s.name.endsWith('_total') ? { ...s, value: 0 } : s));
const P = 'http://p:8000/metrics';
const D = 'http://d:8000/metrics';
const snap = (endpoint: string, samples: EndpointSnapshot['samples']): EndpointSnapshot => ({ endpoint, samples });

describe('idle-role gate of a P/D point (rule 27)', () => {
  it('both roles finished requests over the window: no message', () => {
    expect(
      idleRoleMessages([snap(P, zeroed), snap(D, zeroed)], [snap(P, busy), snap(D, busy)], ['prefill', 'decode']),
    ).toEqual([]);
  });

  it('a decode role whose counters did not move is idle, and says which workers', () => {
    expect(
      idleRoleMessages([snap(P, zeroed), snap(D, busy)], [snap(P, busy), snap(D, busy)], ['prefill', 'decode']),
    ).toEqual([`idle decode role: no request finished on its workers (${D}) during the profile`]);
    expect(
      idleRoleMessages([snap(P, busy), snap(D, zeroed)], [snap(P, busy), snap(D, busy)], ['prefill', 'decode']),
    ).toEqual([`idle prefill role: no request finished on its workers (${P}) during the profile`]);
  });

  it('a role with several workers is busy when any of them served; an unscraped endpoint is named, not counted as idle', () => {
    const P2 = 'http://p2:8000/metrics';
    expect(
      idleRoleMessages(
        [snap(P, busy), snap(P2, zeroed), snap(D, zeroed)],
        [snap(P, busy), snap(P2, busy), snap(D, busy)],
        ['prefill', 'prefill', 'decode'],
      ),
    ).toEqual([]);
    expect(
      idleRoleMessages([snap(P, zeroed), snap(D, null)], [snap(P, busy), snap(D, busy)], ['prefill', 'decode']),
    ).toEqual([`decode role: no served-request count of ${D} at both edges of the profile`]);
  });

  it('each role must have served every request the client completed in the window, within the requests in flight', () => {
    const n = Object.values(servedPerEngine(busy)).reduce((a, b) => a + b, 0);
    expect(n).toBe(4); // the capture's served requests over both engines
    const start = [snap(P, zeroed), snap(D, zeroed)];
    const end = [snap(P, busy), snap(D, busy)];
    // the client completed n − 1 with 1 in flight at the end: within the bound, both roles ok
    const ok = checkRoles(start, end, ['prefill', 'decode'], { requests: n - 1, maxInFlight: 1 });
    expect(ok.map((c) => [c.role, c.served, c.client_requests, c.tolerance, c.ok])).toEqual([
      ['prefill', n, n - 1, 1, true],
      ['decode', n, n - 1, 1, true],
    ]);
    // a prefill group that served 1 of the 4 measured requests (a router bypassing it for the rest)
    const half = busy.map((s) => (s.name.endsWith('_total') ? { ...s, value: Math.floor(s.value / 2) } : s));
    const h = Object.values(servedPerEngine(half)).reduce((a, b) => a + b, 0);
    expect(h).toBe(1);
    const bad = checkRoles([snap(P, zeroed), snap(D, zeroed)], [snap(P, half), snap(D, busy)], ['prefill', 'decode'], {
      requests: n,
      maxInFlight: 1,
    });
    expect(bad.map((c) => c.ok)).toEqual([false, true]);
    expect(bad[0]!.message).toBe(
      `prefill role served ${h} requests during the profile, the client completed ${n} (± 1 in flight): not every measured request went through the prefill role`,
    );
  });

  /**
   * Real scrapes of llm-d-inference-sim v0.10.2 (`--model m --force-dummy-tokenizer --max-model-len 4096
   * --time-to-first-token 20ms --inter-token-latency 5ms --mode random`, .tools/bin) as prefill (port 23901) and
   * decode (23902) behind llm-d's pd-sidecar v0.7.1 (`--port 23903 --vllm-port 23902 --kv-connector nixlv2
   * --secure-proxy=false`): `start` right after launch, `end` after five streamed chat requests to the sidecar
   * with `x-prefiller-host-port: 127.0.0.1:23901` and one without the header (the sidecar's decode-only path).
   * The prefill simulator counts 5 `remote_decode`, the decode simulator 6 `stop`; neither has an `engine` label.
   */
  const sim = (f: string) =>
    parsePrometheus(readFileSync(new URL(`./data/llm-d-sim-pd-${f}.txt`, import.meta.url), 'utf8')).samples;
  const PS = 'http://127.0.0.1:23901/metrics';
  const DS = 'http://127.0.0.1:23902/metrics';

  it("counts a whole endpoint's requests without per-engine labels: the one request that bypassed prefill is caught", () => {
    const start = [snap(PS, sim('prefill-start')), snap(DS, sim('decode-start'))];
    const end = [snap(PS, sim('prefill-end')), snap(DS, sim('decode-end'))];
    // the client completed all 6, sequentially (nothing in flight at the window's end)
    const c = checkRoles(start, end, ['prefill', 'decode'], { requests: 6, maxInFlight: 0 });
    expect(c.map((x) => [x.role, x.served, x.ok])).toEqual([
      ['prefill', 5, false],
      ['decode', 6, true],
    ]);
    expect(c[0]!.message).toBe(
      'prefill role served 5 requests during the profile, the client completed 6 (± 0 in flight): not every measured request went through the prefill role',
    );
    // the presence-only gate would have passed it: the prefill role was not idle
    expect(idleRoleMessages(start, end, ['prefill', 'decode'])).toEqual([]);
  });
});

/**
 * The gate on an aiperf point (libs/agentx/src/aiperf/record.ts): the recorded artifacts of a real aiperf P/D
 * point through llm-d's sidecar (data/aiperf-sim-pd-c2-*: its profile_export.jsonl, server_metrics_export.json
 * and the fields of profile_export_aiperf.json the adapter reads; libs/agentx/test/inferencex-export.test.ts
 * says how they were made), with the real llm-d simulator scrapes above as the run's edges.
 */
describe('idle-role gate of a P/D point measured by aiperf', () => {
  const sim = (f: string) => parsePrometheus(data(`llm-d-sim-pd-${f}.txt`)).samples;
  const PS = 'http://127.0.0.1:23901/metrics';
  const DS = 'http://127.0.0.1:23902/metrics';

  function aiperfPoint(start: EndpointSnapshot[], end: EndpointSnapshot[], metricsRoles?: string[]) {
    return recordedAiperfPoint({
      input: { metricsEndpoints: [PS, DS], ...(metricsRoles === undefined ? {} : { metricsRoles }) },
      snaps: { start, end },
    });
  }

  it('an idle prefill role and a decode role that served fewer than aiperf completed make the point invalid', () => {
    // the prefill worker's counters did not move over the run; the decode worker finished 6 of aiperf's 26
    const start = [snap(PS, sim('prefill-end')), snap(DS, sim('decode-start'))];
    const end = [snap(PS, sim('prefill-end')), snap(DS, sim('decode-end'))];
    const r = aiperfPoint(start, end, ['prefill', 'decode']);
    expect(r.role_checks!.map((x) => [x.role, x.served, x.client_requests, x.tolerance, x.ok])).toEqual([
      ['prefill', 0, 26, 7, false],
      ['decode', 6, 26, 7, false],
    ]);
    expect(r.submission_valid).toBe(false);
    expect(r.submission_invalid_reasons).toEqual([
      'aiperf:unsafe_override',
      `pd_role: idle prefill role: no request finished on its workers (${PS}) during the profile`,
      'pd_role: decode role served 6 requests during the profile, the client completed 26 (± 7 in flight): not every measured request went through the decode role',
    ]);
  });

  it('an aggregated aiperf point has no role checks', () => {
    const edges = [snap(PS, sim('prefill-end')), snap(DS, sim('decode-end'))];
    expect(aiperfPoint(edges, edges).role_checks).toBeUndefined();
  });
});
