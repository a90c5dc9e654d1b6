import { describe, expect, it } from 'vitest';
import {
  subagentEndSeconds,
  subagentJoins,
  type WekaEntry,
  type WekaLeafRequest,
  type WekaSubagent,
} from '@infersweep/agentx';

/**
 * infersweep joins a subagent where aiperf 0.13.0 does (PyPI aiperf 0.13.0,
 * aiperf/dataset/loader/weka_trace.py: `_sa_end_seconds`, `_subagent_request_absolute_t` and the join scan
 * of `convert_to_conversations` — first later parent turn with t + 1e-6 >= the subagent's end, else a
 * background branch; `status` is not read), the rule InferenceX measures with.
 */
const leaf = (t: number, api = 0.5): WekaLeafRequest => ({
  t,
  type: 'n',
  model: 'm',
  in: 10,
  out: 4,
  hash_ids: [1],
  input_types: ['text'],
  output_types: ['text'],
  stop: 'end_turn',
  api_time: api,
  think_time: null,
});
const sub = (
  t: number,
  durationMs: number | null,
  requests: WekaLeafRequest[],
  status = 'completed',
): WekaSubagent => ({
  t,
  type: 'subagent',
  agent_id: `a${t}`,
  subagent_type: 'Explore',
  duration_ms: durationMs,
  total_tokens: null,
  tool_use_count: null,
  status,
  requests,
  models: ['m'],
  tool_tokens: 0,
  system_tokens: 0,
});

describe('subagentEndSeconds (aiperf _sa_end_seconds)', () => {
  it('is spawn + duration_ms when recorded, clamped at the spawn', () => {
    expect(subagentEndSeconds(sub(10, 2500, [leaf(10)]))).toBe(12.5);
    expect(subagentEndSeconds(sub(10, -5, [leaf(10)]))).toBe(10);
  });
  it('is the last request end without duration_ms; timestamps before the spawn are relative to it', () => {
    expect(subagentEndSeconds(sub(10, null, [leaf(10, 1), leaf(12, 3)]))).toBe(15);
    expect(subagentEndSeconds(sub(10, null, [leaf(0, 1), leaf(2, 3)]))).toBe(15);
    expect(subagentEndSeconds(sub(10, null, []))).toBe(10);
  });
});

describe('subagentJoins (aiperf convert_to_conversations)', () => {
  it('joins before the first later root recorded at/after the end, not the next root', () => {
    const entries: WekaEntry[] = [leaf(0), sub(1, 5000, [leaf(1)]), leaf(2), leaf(4), leaf(6), leaf(8)];
    expect(subagentJoins(entries)).toEqual([undefined, 4, undefined, undefined, undefined, undefined]);
  });
  it('ignores status: an async_launched subagent with a later root after its end is joined there', () => {
    const entries: WekaEntry[] = [leaf(0), sub(1, null, [leaf(1, 1)], 'async_launched'), leaf(1.5), leaf(3)];
    expect(subagentJoins(entries)).toEqual([undefined, 3, undefined, undefined]);
  });
  it('runs in the background when no later root starts after the end; a root exactly at the end joins', () => {
    expect(subagentJoins([leaf(0), sub(1, 9000, [leaf(1)]), leaf(2)])).toEqual([undefined, null, undefined]);
    expect(subagentJoins([leaf(0), sub(1, 1000, [leaf(1)]), leaf(2)])).toEqual([undefined, 2, undefined]);
  });
});
