/**
 * The nightly-verdict table of docs/statistics.md: 1000 seeded nights per row (80 series as 16 units
 * × 5 points, baseline 20, window 2) through libs/stats `nightlyVerdict`, for σ 1–5 % and AR(1)
 * ρ 0–0.7, plus power rows. `npx tsx bench/stats-nights.ts [nights] [--per-point]`; under a minute on one core.
 */
import { nights, NIGHT } from '@infersweep/testkit/sim-figures';

const count = Number(process.argv[2] ?? 1000);
// `--per-point`: the per-point path flags units too (docs/statistics.md "Third registration")
const settings = { perPoint: process.argv.includes('--per-point') };
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

console.log(`| σ | ρ | false alarms per 100 nights | nights with ≥ 1 false alarm |`);
console.log(`| --- | --- | --- | --- |`);
for (const rho of [0, 0.3, 0.5, 0.7])
  for (const sigma of [0.01, 0.02, 0.03, 0.04, 0.05]) {
    const r = nights(
      count,
      { ...NIGHT, sigma, rho },
      1000 + Math.round(100 * sigma) + Math.round(1000 * rho),
      settings,
    );
    console.log(
      `| ${pct(sigma)} | ${rho} | ${((100 * r.falseAlarms) / count).toFixed(2)} | ${r.nightsWithFalseAlarm} |`,
    );
  }

console.log(`\n| σ | ρ | step | points of the unit stepped | power (unit flagged) | false alarms per 100 nights |`);
console.log(`| --- | --- | --- | --- | --- | --- |`);
for (const [sigma, rho, step, points] of [
  [0.01, 0, 0.9, 5],
  [0.03, 0, 0.9, 5],
  [0.05, 0, 0.9, 5],
  [0.03, 0.5, 0.9, 5],
  [0.03, 0, 0.95, 5],
  [0.03, 0, 0.9, 2],
  [0.03, 0, 0.9, 1],
] as const) {
  const r = nights(
    count,
    { ...NIGHT, sigma, rho, steppedUnits: 1, step, steppedPoints: points },
    2000 + points,
    settings,
  );
  console.log(
    `| ${pct(sigma)} | ${rho} | ${pct(step - 1)} | ${points} of 5 | ${pct(r.stepped / count)} | ${((100 * r.falseAlarms) / count).toFixed(2)} |`,
  );
}

console.log(`\n| points' correlation | σ | ρ | step | unit flagged | false alarms per 100 nights |`);
console.log(`| --- | --- | --- | --- | --- | --- |`);
for (const [rho, step] of [
  [0, 1],
  [0.5, 1],
  [0, 0.9],
] as const) {
  const shape = { ...NIGHT, crossCorrelation: 0.8, rho, steppedUnits: step < 1 ? 1 : 0, step };
  const r = nights(count, shape, 3000 + Math.round(10 * rho), settings);
  const power = step < 1 ? pct(r.stepped / count) : '—';
  console.log(`| 0.8 | 3.0 % | ${rho} | ${pct(step - 1)} | ${power} | ${((100 * r.falseAlarms) / count).toFixed(2)} |`);
}
