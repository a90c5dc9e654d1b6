/**
 * The SLO-limit search under noise, beyond the registered cases of docs/search.md: 2000 seeded
 * searches per row (libs/testkit/src/limit-sim.ts: true limit 40 on [1, 256], configured point 8,
 * resolution 10 %) for curve elasticity 0.5 / 1.5 × noise 5 / 10 / 20 % × spurious invalid windows
 * 0 / 5 %. Descriptive: no target is judged here. `npx tsx bench/search-noise.ts [searches]`.
 */
import { noiseFree, runCase } from '@infersweep/testkit/limit-sim';

const count = Number(process.argv[2] ?? 2000);
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

console.log('| elasticity | noise | spurious invalid | within ±4 | interval covers | mean windows (noise-free) |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const elasticity of [1.5, 0.5])
  for (const sigma of [0.05, 0.1, 0.2])
    for (const spurious of [0, 0.05]) {
      const seed = 100_000 + Math.round(1000 * elasticity) + Math.round(10_000 * sigma) + Math.round(100 * spurious);
      const r = runCase({ elasticity, sigma, spurious }, seed, count);
      console.log(
        `| ${elasticity} | ${pct(sigma)} | ${pct(spurious)} | ${pct(r.within)} | ${pct(r.covers)} | ${r.meanWindows.toFixed(2)} (${noiseFree(elasticity)}) |`,
      );
    }
