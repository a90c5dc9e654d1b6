/**
 * The history's nightly-verdict tables of docs/history.md ("Measured"): 1000 seeded nights per row
 * (16 orientations × 5 points, 20 baseline runs and the window of 2, one primary metric) through
 * libs/history `evaluateRun`, as libs/history/test/nightly.sim.test.ts runs fewer per commit; then
 * the σ × ρ table and the drift row (100 series); then a scheduled night of 3 orientations × 27
 * series judged as one family beside one family per orientation (H9–H12). `npx tsx
 * bench/history-nights.ts [nights] [--scheduled]` (only the scheduled rows); about 20 ms a night
 * on one idle core (50 ms a scheduled night, judged both ways).
 */
import {
  HISTORY_NIGHT,
  SCHEDULED_NIGHT,
  driftOutcomes,
  historyNights,
  scheduledNights,
} from '@infersweep/testkit/nights-fixture';

const count = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 1000);
const scheduledOnly = process.argv.includes('--scheduled');
const per100 = (x: number) => ((100 * x) / count).toFixed(2);
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

if (!scheduledOnly) perRunTables();
scheduledTable();

function perRunTables(): void {
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
}

/** H9–H12: a scheduled night (3 orientations × 9 points × 3 primary metrics), one family vs one per orientation. */
function scheduledTable(): void {
  console.log(
    `\n| row | σ | ρ | step | family | false alarms per 100 nights | nights BH rejected (before the gate) per 100 | stepped unit flagged |`,
  );
  console.log(`| --- | --- | --- | --- | --- | --- | --- | --- |`);
  for (const [name, rho, step, seed] of [
    ['H9, H12', 0, undefined, 209],
    ['H10', 0.5, undefined, 210],
    ['H11', 0, 0.9, 211],
    ['', 0.5, 0.9, 212],
  ] as const) {
    const r = scheduledNights(count, { ...SCHEDULED_NIGHT, rho, ...(step ? { step } : {}) }, seed);
    for (const [family, c] of [
      ['the night', r.night],
      ['per orientation', r.perOrientation],
    ] as const)
      console.log(
        `| ${family === 'the night' ? name : ''} | 3 % | ${rho} | ${step ? pct(step - 1) : 'none'} | ${family} | ${per100(c.falseAlarms)} | ${per100(c.nightsRejected)} | ${step ? pct(c.stepped / count) : '—'} |`,
      );
  }
}

function countsOf(xs: readonly number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
