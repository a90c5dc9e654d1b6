/**
 * Replicates across allocations (the config's `replicates:` block, docs/statistics.md §1): pure
 * decisions over SweepProgress.replicates, so a replayed, restarted or continued sweep decides the
 * same and a settled replicate is never measured again (its values are workflow state).
 *
 * Order: the first pass is replicate 1 of every point. Once every point (and the search) has
 * settled, the replicated points are chosen (all, a list, the search's answers) and measured again
 * in rounds, interleaved: the next replicate is always one of the points with the fewest settled
 * replicates (round k = every still-replicating point's k-th replicate, in point order), never all
 * replicates of one point back to back. A replicate never runs on an allocation that point already
 * ran on (`needsFreshAllocation`), so each round starts a fresh allocation and a lost allocation's
 * replacement is fresh too.
 *
 * Stopping: after each replicate, per target metric, the calibrated sequential rule
 * (libs/stats `calibratedSequentialDecision`, R6: 95 % coverage, fewer replicates than fixed n):
 * the point stops when every target is met, or at `max`. Without a target: a fixed n = min, and the
 * exact t-interval.
 */
import { calibratedSequentialDecision, tInterval, varianceSplit, type MeanInterval } from '@infersweep/stats';
import type { ReplicateMetric } from '@infersweep/topology';
import type {
  PointState,
  PointSummary,
  ReplicatedPoint,
  ReplicatesProgress,
  ReplicateStat,
  SweepProgress,
  SweepReplicates,
} from './contract';

/** The metrics every replicated point gets a CI for (a target may name any of REPLICATE_METRICS). */
export const SHOWN_METRICS = [
  'totalThroughputPerGpu',
  'interactivityP50',
  'e2eNormInteractivityP90',
] as const satisfies ReplicateMetric[];

const valuesOf = (s: PointSummary, metrics: readonly ReplicateMetric[]): Partial<Record<ReplicateMetric, number>> =>
  Object.fromEntries(metrics.flatMap((m) => (typeof s[m] === 'number' ? [[m, s[m]]] : [])));

const metricsOf = (spec: SweepReplicates): ReplicateMetric[] => [
  ...new Set<ReplicateMetric>([...SHOWN_METRICS, ...(Object.keys(spec.target) as ReplicateMetric[])]),
];

/** The concurrencies the block names, resolved against the settled first pass and the search's answers. */
export function replicatedConcurrencies(
  p: SweepProgress,
  spec: SweepReplicates,
): { concurrencies: number[]; unresolved: string[] } {
  const valid = p.points.filter((pt) => pt.status === 'done' && pt.summary?.valid);
  const has = (c: number) => valid.some((pt) => pt.concurrency === c);
  if (spec.points === 'all') return { concurrencies: valid.map((pt) => pt.concurrency), unresolved: [] };
  const out: number[] = [];
  const unresolved: string[] = [];
  for (const entry of spec.points) {
    const c =
      entry === 'slo-limit' ? p.search?.limit?.concurrency : entry === 'knee' ? p.search?.knee?.concurrency : entry;
    if (c === null || c === undefined) unresolved.push(`${entry}: the search has no answer`);
    else if (!has(c)) unresolved.push(`${entry}: c=${c} has no valid first-pass measurement`);
    else if (!out.includes(c)) out.push(c);
  }
  const order = p.points.map((pt) => pt.concurrency);
  return { concurrencies: out.sort((a, b) => order.indexOf(a) - order.indexOf(b)), unresolved };
}

/** Start replicating: each chosen point with its first pass as replicate 1 (idempotent). */
export function startReplicates(p: SweepProgress, spec: SweepReplicates): ReplicatesProgress {
  if (p.replicates) return p.replicates;
  const { concurrencies, unresolved } = replicatedConcurrencies(p, spec);
  const metrics = metricsOf(spec);
  p.replicates = {
    points: concurrencies.map((c) => {
      const pt = p.points.find((x) => x.concurrency === c)!;
      const s = pt.summary!;
      const rp: ReplicatedPoint = {
        concurrency: c,
        status: 'replicating',
        replicates: [
          {
            jobId: s.jobId ?? pt.jobId ?? '',
            nodes: s.nodes ?? [],
            resultPath: s.resultPath,
            values: valuesOf(s, metrics),
          },
        ],
        stats: {},
      };
      decide(rp, spec);
      return rp;
    }),
    ...(unresolved.length > 0 ? { unresolved } : {}),
  };
  return p.replicates;
}

/**
 * The next replicate to measure (a point state to run, its replicate number in `replicate`), or
 * undefined when every replicated point has stopped. The one with the fewest settled replicates
 * first (interleaved rounds), in point order.
 */
export function nextReplicate(
  r: ReplicatesProgress,
): { point: ReplicatedPoint; state: PointState; replicate: number } | undefined {
  const open = r.points.filter((rp) => rp.status === 'replicating');
  if (open.length === 0) return undefined;
  const fewest = Math.min(...open.map((rp) => rp.replicates.length));
  const point = open.find((rp) => rp.replicates.length === fewest)!;
  point.current ??= { concurrency: point.concurrency, status: 'pending', attempts: 0 };
  return { point, state: point.current, replicate: point.replicates.length + 1 };
}

/** The replicate must not run on an allocation this point already ran on (independent allocations). */
export function needsFreshAllocation(point: ReplicatedPoint, jobId: string | undefined): boolean {
  return jobId !== undefined && point.replicates.some((x) => x.jobId === jobId);
}

/**
 * The replicate ran (its state finished by the sweep's point-state machine): a valid result is a
 * settled replicate and the rule decides again; an invalid one or a failed one (attempts spent)
 * stops the point's replication with the reason (its earlier replicates and CI stay). A requeued
 * replicate (its allocation was lost) stays current and runs again.
 */
export function settleReplicate(point: ReplicatedPoint, spec: SweepReplicates): void {
  const cur = point.current;
  if (!cur || cur.status === 'pending' || cur.status === 'running') return;
  const s = cur.summary;
  if (cur.status === 'done' && s?.valid) {
    point.replicates.push({
      jobId: s.jobId ?? cur.jobId ?? '',
      nodes: s.nodes ?? [],
      resultPath: s.resultPath,
      values: valuesOf(s, metricsOf(spec)),
    });
    point.current = undefined;
    decide(point, spec);
    return;
  }
  point.status = 'failed';
  point.note = `replicate ${point.replicates.length + 1} ${cur.status}: ${cur.lastError ?? s?.reasons.join('; ') ?? 'no reason recorded'}`;
  point.current = undefined;
}

/** Recompute the point's CIs and apply the stopping rule. */
function decide(point: ReplicatedPoint, spec: SweepReplicates): void {
  const targets = Object.entries(spec.target) as [ReplicateMetric, number][];
  const n = point.replicates.length;
  const series = (m: ReplicateMetric) =>
    point.replicates.map((x) => x.values[m]).filter((v): v is number => typeof v === 'number');
  point.stats = {};
  for (const m of metricsOf(spec)) {
    const v = series(m);
    if (v.length < 2) continue;
    const target = spec.target[m];
    point.stats[m] = statOf(replicateInterval(v, target, spec), target);
  }
  if (point.status !== 'replicating') return;
  if (targets.length === 0) {
    if (n >= spec.min) point.status = 'fixed-n';
    return;
  }
  const missing = targets.filter(([m]) => series(m).length < n).map(([m]) => m);
  if (missing.length > 0) {
    point.status = 'failed';
    point.note = `no ${missing.join(', ')} in replicate ${n}: the target cannot be judged`;
    return;
  }
  const decisions = targets.map(([m, t]) => ({
    m,
    d: calibratedSequentialDecision(series(m), { min: spec.min, max: spec.max, relativeHalfWidth: t }),
  }));
  if (decisions.every(({ d }) => d.stop && d.reason === 'target-met')) point.status = 'target-met';
  else if (n >= spec.max) {
    point.status = 'max-reached';
    point.note = `target not met within max ${spec.max}: ${decisions
      .filter(({ d }) => !(d.stop && d.reason === 'target-met'))
      .map(
        ({ m, d }) =>
          `${m} ±${(100 * (d.interval?.relativeHalfWidth ?? Number.NaN)).toFixed(1)} % > ${(100 * spec.target[m]!).toFixed(1)} %`,
      )
      .join(', ')}`;
  }
}

/**
 * The published CI of a metric's allocation values: the calibrated sequential rule's interval where
 * the metric has a target (the rule that stopped it), else the exact t-interval (a fixed n).
 */
export function replicateInterval(
  values: readonly number[],
  target: number | undefined,
  spec: Pick<SweepReplicates, 'min' | 'max'>,
): MeanInterval {
  if (target === undefined) return tInterval(values);
  const rule = { min: spec.min, max: Math.max(spec.min, spec.max), relativeHalfWidth: target };
  return calibratedSequentialDecision(values, rule).interval ?? tInterval(values);
}

function statOf(ci: MeanInterval, target: number | undefined): ReplicateStat {
  return {
    n: ci.n,
    mean: ci.mean,
    lower: ci.lower,
    upper: ci.upper,
    halfWidth: ci.halfWidth,
    relativeHalfWidth: ci.relativeHalfWidth,
    level: ci.level,
    ...(target === undefined ? {} : { target }),
  };
}

/** Replicates still to measure at most (each replicating point up to max; fixed n: up to min). */
export function replicatesPending(r: ReplicatesProgress, spec: SweepReplicates): number {
  const cap = Object.keys(spec.target).length === 0 ? spec.min : spec.max;
  return r.points
    .filter((rp) => rp.status === 'replicating')
    .reduce((s, rp) => s + Math.max(0, cap - rp.replicates.length), 0);
}

/**
 * What `status` shows: a headline (points replicating, the next replicate) and one line per point
 * with its CI, n and status; empty before the replicates start (and without a replicates block).
 */
export function replicateStatusLines(p: SweepProgress): string[] {
  const r = p.replicates;
  if (!r) return [];
  const open = r.points.filter((rp) => rp.status === 'replicating');
  const fewest = open.length > 0 ? Math.min(...open.map((rp) => rp.replicates.length)) : 0;
  const next = open.find((rp) => rp.replicates.length === fewest);
  const head =
    open.length === 0
      ? `${r.points.length} point(s) replicated, none pending`
      : `${open.length} of ${r.points.length} point(s) still replicating; next: replicate ${fewest + 1} of c=${next!.concurrency}`;
  return [head, ...replicateLines(r), ...(r.unresolved ?? []).map((u) => `not replicated: ${u}`)];
}

/** One line per replicated point: `c=8 totalThroughputPerGpu 1234.5 ± 2.1 % (n 4, target-met)`. */
export function replicateLines(r: ReplicatesProgress): string[] {
  return r.points.map((rp) => {
    const parts = Object.entries(rp.stats).map(
      ([m, s]) => `${m} ${s.mean.toFixed(1)} ± ${(100 * s.relativeHalfWidth).toFixed(1)} %`,
    );
    const n = rp.replicates.length;
    return `c=${rp.concurrency} ${parts.length > 0 ? parts.join(', ') : 'no CI yet'} (n ${n}, ${rp.status}${rp.note ? `: ${rp.note}` : ''})`;
  });
}

/**
 * The between-allocation share of a point's replicate variance (libs/stats varianceSplit), from its
 * request values grouped by allocation; undefined below 2 allocations.
 */
export function betweenAllocationShare(groups: readonly (readonly number[])[]): number | undefined {
  if (groups.filter((g) => g.length > 0).length < 2) return undefined;
  return varianceSplit(groups.filter((g) => g.length > 0)).betweenShare;
}
