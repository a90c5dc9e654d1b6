import { describe, expect, it } from 'vitest';
import { stats } from '@infersweep/agentx';
import { p99HoldsUpTo, summaryLines } from '../lib/summary';
import { overheadBreakdown } from '../lib/overhead';

const row = (reader: string, targetRate: number, values: number[]) => ({
  reader,
  targetRate,
  eventsPerSecond: targetRate,
  errors: stats(values),
});

describe('bench summary', () => {
  it('finds the highest rate up to which p99 holds, stopping at the first breach', () => {
    const rows = [
      row('client', 20_000, [0.5]),
      row('client', 5_000, [0.2]),
      row('client', 10_000, [2]),
      row('client', 40_000, [0.1]),
    ];
    expect(p99HoldsUpTo(rows, 1)).toBe(5_000);
    expect(p99HoldsUpTo([row('client', 5_000, [3])], 1)).toBeNull();
    expect(p99HoldsUpTo([row('client', 5_000, [])], 1)).toBeNull();
  });

  it('states each ratio against its goal, met or not', () => {
    const overhead = overheadBreakdown({
      workflowStartMs: 0,
      workflowEndMs: 100_000,
      activities: [
        { type: 'waitReady', scheduledMs: 0, startedMs: 0, closedMs: 10_000 },
        { type: 'runPoint', scheduledMs: 10_000, startedMs: 10_000, closedMs: 100_000, concurrency: 4 },
      ],
      points: [
        { concurrency: 4, clientStartMs: 10_000, profileStartMs: 12_000, profileEndMs: 98_000, clientEndMs: 100_000 },
      ],
    });
    const lines = summaryLines({
      ceiling: [
        { concurrency: 16, ofBare: 0.9, ofRaw: 0.5 },
        { concurrency: 1024, ofBare: 0.7, ofRaw: 0.4 },
      ],
      timing: [row('client', 5_000, [0.1, 0.2]), row('client', 20_000, [0.3, 0.9]), row('aiperf', 20_000, [3, 4])],
      overhead,
      scaling: [
        { concurrency: 16, contextTokens: 1048576, cpuFraction: 0.2, peakRssBytes: 300 * 2 ** 20 },
        { concurrency: 1024, contextTokens: 4096, cpuFraction: 0.9, peakRssBytes: 200 * 2 ** 20 },
      ],
    });
    expect(lines[0]).toContain('90 % (c=16), 70 % (c=1024) of the bare reader');
    expect(lines[0]).toContain('NOT met (worst 70 %)');
    expect(lines[1]).toContain('client: p99 0.89 ms at 20000 events/s, ≤ 1 ms up to 20000 events/s');
    expect(lines[1]).toContain('aiperf: p99 3.99 ms at 20000 events/s, ≤ 1 ms up to none of the rates');
    expect(lines[1]).toMatch(/goal p99 ≤ 1 ms up to 20000 events\/s\/core: met by the client$/);
    expect(lines[2]).toContain('14 % of the sweep outside the profiled windows, 4 % beyond the engine');
    expect(lines[2]).toContain('goal ≤ 5 %: met');
    expect(lines[3]).toBe(
      '4. scaling: peak RSS 300 MiB at c=16 × 1,048,576 tokens; highest client CPU 90 % of a core at c=1024 × 4,096',
    );
  });

  it('says when the overhead was not measured', () => {
    expect(summaryLines({ ceiling: [], timing: [], overhead: null, scaling: [] })).toEqual([
      '3. orchestration overhead: not measured (the sweep failed; see above)',
    ]);
  });
});
