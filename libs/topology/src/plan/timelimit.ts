import type { Budgets } from '../config/schema';
import type { PointBudget, SweepPlan, TimeLimit } from './schema';

/** The deployment policy (its one definition is the config schema's; libs/sweep's DeploymentPolicy is the same union). */
type DeploymentPolicy = SweepPlan['deployment']['policy'];

/** Per-point budget: warmup + profile + worst-case drain. */
export function pointBudget(
  concurrency: number,
  budgets: Budgets,
  profileSeconds: number,
  drainSeconds: number,
): PointBudget {
  const warmupSeconds = budgets.pointWarmupSeconds;
  return {
    concurrency,
    warmupSeconds,
    profileSeconds,
    drainSeconds,
    totalSeconds: warmupSeconds + profileSeconds + drainSeconds,
  };
}

/** One point's GPU count and budget (any concurrency: the budget does not depend on it), for GPU-hour bounds. */
export function pointCost(p: {
  topology: { tp: number; pp: number; dp: number };
  budgets: Budgets;
  agentx: { profileDurationSeconds: number; drain: { deadlineSeconds: number } };
}): { gpus: number; pointSeconds: number; pointGpuHours: number } {
  const gpus = p.topology.tp * p.topology.pp * p.topology.dp;
  const pointSeconds = pointBudget(
    0,
    p.budgets,
    p.agentx.profileDurationSeconds,
    p.agentx.drain.deadlineSeconds,
  ).totalSeconds;
  return { gpus, pointSeconds, pointGpuHours: (gpus * pointSeconds) / 3600 };
}

const min = (s: number) => Math.ceil(s / 60);

/**
 * Slurm time limit (per allocation) = import + startup + Σ points + teardown, plus
 * max(marginPercent, marginMinMinutes), rounded up to whole minutes.
 * - shared-server: one server for all points.
 * - server-per-point: one allocation, the server restarts per point (startup + teardown each).
 * - allocation-per-point: the limit is for one point's allocation (the longest point).
 */
export function computeTimeLimit(
  budgets: Budgets,
  points: readonly PointBudget[],
  policy: DeploymentPolicy,
): TimeLimit {
  const { imageImportSeconds: imp, startupSeconds: up, teardownSeconds: down } = budgets;
  const pointTerm = (p: PointBudget) =>
    `(warmup ${p.warmupSeconds} s + profile ${p.profileSeconds} s + drain ${p.drainSeconds} s)`;
  const sumPoints = points.reduce((s, p) => s + p.totalSeconds, 0);
  const same = points.every((p) => p.totalSeconds === points[0]?.totalSeconds);
  const pointsText = (withServer: boolean) => {
    const wrap = (p: PointBudget) =>
      withServer ? `(startup ${up} s + ${pointTerm(p)} + teardown ${down} s)` : pointTerm(p);
    return same && points[0] ? `${points.length} × ${wrap(points[0])}` : points.map(wrap).join(' + ');
  };
  let base: number;
  let text: string;
  if (policy === 'shared-server') {
    base = imp + up + sumPoints + down;
    text = `import ${imp} s + startup ${up} s + ${pointsText(false)} + teardown ${down} s`;
  } else if (policy === 'server-per-point') {
    base = imp + sumPoints + points.length * (up + down);
    text = `import ${imp} s + ${pointsText(true)}`;
  } else {
    const longest = points.reduce<PointBudget | undefined>(
      (a, p) => (a === undefined || p.totalSeconds > a.totalSeconds ? p : a),
      undefined,
    );
    const pt = longest?.totalSeconds ?? 0;
    base = imp + up + pt + down;
    text = `per allocation (one point each): import ${imp} s + startup ${up} s + ${longest ? pointTerm(longest) : '0 s'} + teardown ${down} s`;
  }
  const marginSeconds = Math.max((base * budgets.marginPercent) / 100, budgets.marginMinMinutes * 60);
  const minutes = Math.max(1, min(base + marginSeconds));
  const derivation =
    `${text} = ${base} s (${(base / 60).toFixed(1)} min) + margin max(${budgets.marginPercent} %, ${budgets.marginMinMinutes} min) = ` +
    `${(marginSeconds / 60).toFixed(1)} min → ${minutes} min`;
  return { minutes, baseSeconds: base, marginSeconds, derivation };
}
