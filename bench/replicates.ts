/**
 * `npm run bench -- replicates [--cluster h200|local] [--cv 0.02] [--target 0.03] [--max 6] [--sweeps 2000]`:
 * GPU-hours of a 6-point sweep with replicates of every point, of one point (the search's answer:
 * the planner is given a list of one point, which costs the same), and a single pass. Computed, not
 * run: the planner's worst case (on h200 with a 30-minute profile, so 6 points fit one allocation) (every replicated point at max, every startup at its budget) and a
 * seeded simulation of the calibrated sequential rule at a known allocation CV (bench/lib/replicates.ts).
 * Goal: replicating only the answer costs ≤ 1.5× a single pass.
 */
import { planSweep, type ReplicatesConfig } from '@infersweep/topology';
import { loadSweepConfig } from '@infersweep/orchestrator';
import { options } from './common';
import { simulatedGpuHours, sweepGpuHours } from './lib/replicates';

const POINTS = [1, 2, 4, 8, 16, 32];

export async function replicatesBench(args: string[]): Promise<unknown> {
  const opt = options(args);
  const cluster = opt('--cluster') ?? 'h200';
  const cv = Number(opt('--cv') ?? 0.02);
  const target = Number(opt('--target') ?? 0.03);
  const max = Number(opt('--max') ?? 6);
  const sweeps = Number(opt('--sweeps') ?? 2000);
  const planWith = (replicates: ReplicatesConfig) => {
    const loaded = loadSweepConfig({ clusters: [cluster] });
    // a 30-minute profile: 6 points of InferenceX's 60-minute profile do not fit h200's 720-minute limit
    if (cluster === 'h200') loaded.config.agentx.profileDurationSeconds = 1800;
    const o = loaded.config.orientations.balanced!;
    o.concurrency = POINTS;
    o.replicates = replicates;
    return planSweep(loaded.config, { orientation: 'balanced', cluster, source: loaded.source });
  };
  const fixed = (points: ReplicatesConfig['points']) =>
    planWith({ points, min: 3, independentAllocations: true }).replicates!;
  const sequential = (points: ReplicatesConfig['points']) =>
    planWith({ points, min: 3, max, target: { totalThroughputPerGpu: target }, independentAllocations: true })
      .replicates!;
  const basePlan = planWith({ points: 'all', min: 3, independentAllocations: true });
  const base = basePlan.replicates!;
  const gpus = basePlan.topology.gpus;
  const cost = { points: POINTS.length, pointGpuHours: base.pointGpuHours, startupGpuHours: base.startupGpuHours };
  const single = sweepGpuHours(cost, []);
  const rule = { min: 3, max, target, cv };
  const simAll = simulatedGpuHours(cost, POINTS.length, rule, sweeps, 311);
  const simOne = simulatedGpuHours(cost, 1, rule, sweeps, 312);
  const rows: [string, number, string][] = [
    ['single pass', single, 'planner'],
    ['all 6 points, min 3 (fixed n)', fixed('all').worstCaseGpuHours, 'planner = run'],
    [
      `all 6 points, sequential ±${100 * target} %, max ${max}`,
      sequential('all').worstCaseGpuHours,
      'planner worst case',
    ],
    ['', simAll.gpuHours, `simulated, mean n ${simAll.meanReplicates.toFixed(2)}`],
    ["the search's answer only, min 3 (fixed n)", fixed([POINTS[3]!]).worstCaseGpuHours, 'planner = run'],
    [
      `the search's answer only, sequential ±${100 * target} %, max ${max}`,
      sequential([POINTS[3]!]).worstCaseGpuHours,
      'planner worst case',
    ],
    ['', simOne.gpuHours, `simulated, mean n ${simOne.meanReplicates.toFixed(2)}`],
  ];
  console.log(
    `\n# Replicates — GPU-hours of a 6-point sweep (cluster ${cluster}: ${cost.pointGpuHours.toFixed(2)} GPU-h per point, ${cost.startupGpuHours.toFixed(2)} per startup at its budget; allocation CV ${100 * cv} %, ${sweeps} seeded sweeps)`,
  );
  console.log('| replication | GPU-hours | × single pass | how |\n| --- | --- | --- | --- |');
  for (const [name, gh, how] of rows)
    console.log(`| ${name} | ${gh.toFixed(1)} | ${(gh / single).toFixed(2)} | ${how} |`);
  const answerFixed = rows[4]![1] / single;
  const answerSeq = simOne.gpuHours / single;
  console.log(
    `\nGoal: the answer only ≤ 1.5× a single pass — fixed n ${answerFixed.toFixed(2)}× (${answerFixed <= 1.5 ? 'met' : 'missed'}), sequential (simulated) ${answerSeq.toFixed(2)}× (${answerSeq <= 1.5 ? 'met' : 'missed'}).`,
  );
  // GPU-hours are linear in the startup: the startup (per allocation) below which fixed-n replication of the answer meets the goal
  const at = (startupGpuHours: number) => {
    const c = { ...cost, startupGpuHours };
    return sweepGpuHours(c, [3]) - 1.5 * sweepGpuHours(c, []);
  };
  const breakEven = at(0) / (at(0) - at(1));
  console.log(
    `The answer only, fixed n = 3, meets 1.5× when a server's startup costs ≤ ${breakEven.toFixed(1)} GPU-h: ${((60 * breakEven) / gpus).toFixed(0)} min on ${gpus} GPUs (the planner budgets ${((60 * cost.startupGpuHours) / gpus).toFixed(0)} min).`,
  );
  return { rows, single };
}
