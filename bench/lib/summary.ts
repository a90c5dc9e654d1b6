/**
 * The closing summary of `npm run bench -- all` (pure; unit-tested in bench/test/summary.test.ts): the
 * three ratios against their goals, and the scaling extremes.
 */
import type { Stats } from '@infersweep/agentx';
import { projectedShare, type OverheadReport } from './overhead';

export interface SummaryInput {
  ceiling: Array<{ concurrency: number; ofBare: number; ofRaw: number }>;
  timing: Array<{ reader: string; targetRate: number; eventsPerSecond: number; errors: Stats }>;
  overhead: OverheadReport | null;
  scaling: Array<{ concurrency: number; contextTokens: number; cpuFraction: number; peakRssBytes: number }>;
}

const pc = (x: number): string => `${(100 * x).toFixed(0)} %`;
const ms = (x: number | null): string => (x === null ? 'n/a' : `${x.toFixed(2)} ms`);

/** The highest target rate up to which every measured p99 stays ≤ limitMs (rates ascending), or null. */
export function p99HoldsUpTo(rows: Array<{ targetRate: number; errors: Stats }>, limitMs: number): number | null {
  let best: number | null = null;
  for (const r of [...rows].sort((a, b) => a.targetRate - b.targetRate)) {
    if (r.errors.p99 === null || r.errors.p99 > limitMs) break;
    best = r.targetRate;
  }
  return best;
}

export function summaryLines(s: SummaryInput): string[] {
  const out: string[] = [];
  if (s.ceiling.length) {
    const worst = Math.min(...s.ceiling.map((x) => x.ofBare));
    out.push(
      `1. client ceiling: client tokens per CPU-second = ${s.ceiling.map((x) => `${pc(x.ofBare)} (c=${x.concurrency})`).join(', ')} of the bare reader` +
        ` and ${s.ceiling.map((x) => pc(x.ofRaw)).join(', ')} of the raw-socket reader; goal ≥ 80 % of bare: ${worst >= 0.8 ? 'met' : `NOT met (worst ${pc(worst)})`}`,
    );
  }
  const readers = [...new Set(s.timing.map((r) => r.reader))];
  if (readers.length) {
    const parts = readers.map((rd) => {
      const rows = s.timing.filter((r) => r.reader === rd);
      const upTo = p99HoldsUpTo(rows, 1);
      const at20k = rows.filter((r) => r.targetRate <= 20_000).sort((a, b) => b.targetRate - a.targetRate)[0];
      return `${rd}: p99 ${ms(at20k?.errors.p99 ?? null)} at ${at20k ? at20k.targetRate : 'n/a'} events/s, ≤ 1 ms up to ${upTo === null ? 'none of the rates' : `${upTo} events/s`}`;
    });
    const client = p99HoldsUpTo(
      s.timing.filter((r) => r.reader === 'client'),
      1,
    );
    out.push(
      `2. timing error (receive − send): ${parts.join('; ')}; goal p99 ≤ 1 ms up to 20000 events/s/core: ${client !== null && client >= 20_000 ? 'met' : 'NOT met'} by the client`,
    );
  }
  if (s.overhead) {
    const o = s.overhead;
    const proj = projectedShare(o, 1800);
    out.push(
      `3. orchestration overhead: ${pc(o.outsideShare)} of the sweep outside the profiled windows, ${pc(o.beyondStartupShare)} beyond the engine's start-up` +
        ` (goal ≤ 5 %: ${o.beyondStartupShare <= 0.05 ? 'met' : 'NOT met'} at these short windows; ${pc(proj.beyondStartup)} with 1800 s windows, extrapolated)`,
    );
  } else out.push('3. orchestration overhead: not measured (the sweep failed; see above)');
  if (s.scaling.length) {
    const top = [...s.scaling].sort((a, b) => b.peakRssBytes - a.peakRssBytes)[0]!;
    const busiest = [...s.scaling].sort((a, b) => b.cpuFraction - a.cpuFraction)[0]!;
    out.push(
      `4. scaling: peak RSS ${(top.peakRssBytes / 2 ** 20).toFixed(0)} MiB at c=${top.concurrency} × ${top.contextTokens.toLocaleString('en-US')} tokens; highest client CPU ${pc(busiest.cpuFraction)} of a core at c=${busiest.concurrency} × ${busiest.contextTokens.toLocaleString('en-US')}`,
    );
  }
  return out;
}
