/**
 * The history's nightly-verdict tables of docs/history.md ("Measured"): 1000 seeded nights per row
 * (16 orientations × 5 points, 20 baseline runs and the window of 2, one primary metric) through
 * libs/history `evaluateRun`, as libs/history/test/nightly.sim.test.ts runs fewer per commit; then
 * the σ × ρ table and the drift row (100 series). `npx tsx bench/history-nights.ts [nights]`;
 * about 20 ms a night on one idle core.
 */
import { HISTORY_NIGHT, driftOutcomes, historyNights } from '@infersweep/testkit/nights-fixture';

const count = Number(process.argv[2] ?? 1000);
const per100 = (x: number) => ((100 * x) / count).toFixed(2);
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

console.log(`| row | σ | ρ | step | false alarms per 100 nights | nights with ≥ 1 | stepped orientation flagged |`);
console.log(`| --- | --- | --- | --- | --- | --- | --- |`);
for (const [name, sigma, rho, step, seed] of [
  ['H1', 0.03, 0, undefined, 201],
  ['H2', 0.03, 0.5, undefined, 202],
  ['H3', 0.03, 0, 0.9, 203],
  ['', 0.03, 0.5, 0.9, 204],
  ['', 0.05, 0, 0.9, 205],
  ['', 0.03, 0, 0.95, 206],
] as const) {
  const r = historyNights(count, { ...HISTORY_NIGHT, sigma, rho, ...(step ? { step } : {}) }, seed);
  console.log(
    `| ${name} | ${pct(sigma)} | ${rho} | ${step ? pct(step - 1) : 'none'} | ${per100(r.falseAlarms)} | ${r.nightsWithFalseAlarm} | ${step ? pct(r.stepped / count) : '—'} |`,
  );
}

console.log(`\n| σ | ρ = 0 | ρ = 0.3 | ρ = 0.5 | ρ = 0.7 |`);
console.log(`| --- | --- | --- | --- | --- |`);
for (const sigma of [0.01, 0.02, 0.03, 0.04, 0.05]) {
  const row = [0, 0.3, 0.5, 0.7].map((rho) => {
    const r = historyNights(
      count,
      { ...HISTORY_NIGHT, sigma, rho },
      300 + Math.round(100 * sigma) + Math.round(10 * rho),
    );
    return per100(r.falseAlarms);
  });
  console.log(`| false alarms per 100 nights, σ = ${pct(sigma)} | ${row.join(' | ')} |`);
}

const d = driftOutcomes(100, 205);
console.log(
  `\nH4 (100 series): one whole-series finding inside the drift: ${d.oneFindingInDrift}; nightly counted at most once: ${d.nightlyAtMostOnce}; nightly counts ${JSON.stringify(countsOf(d.nightlyCounts))}; findings per series ${JSON.stringify(countsOf(d.findings))}`,
);

function countsOf(xs: readonly number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
