import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { idleRoleMessages, parsePrometheus, type EndpointSnapshot } from '@infersweep/agentx';

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
    ).toEqual([`decode role: no metrics snapshot of ${D} at both edges of the profile`]);
  });
});
