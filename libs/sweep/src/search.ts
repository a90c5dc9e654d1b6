/**
 * Adaptive points: which concurrency the sweep measures next, decided from the points measured so
 * far. Pure and deterministic (workflow code calls it between points; no I/O, no clock, no
 * randomness), so a replayed or continued sweep makes the same decisions.
 *
 * `slo-limit`: the largest concurrency meeting the SLO, with its 95 % interval and the binding
 * bound (./limit.ts): each point's probability of meeting the SLO from its requests' bootstrap,
 * fitted monotone by PAVA; points that are invalid for a reason that is not load, client-limited,
 * contradicting the fit or a coin flip at the bracket's ends are measured again (a fresh window,
 * at most once) before the bracket moves; then the noise-free bracket/bisection on the fitted
 * verdicts: double from the highest passing point, halve from the lowest failing one, bisect
 * [lo, hi) until hi − lo ≤ the resolution. A point past saturation (invalid because of load),
 * a failed and a skipped point are certain fails, never a reason to stop the sweep.
 *
 * Bound (searchPointBound in libs/core/src/search-bounds.ts): at most ⌈log2(max/min)⌉ bracket
 * points plus ⌈log2((max − min)/step(min))⌉ bisection points, where step(c) is the resolution at c
 * (absolute n, or max(1, ⌊c·relative⌋)), each measured at most MAX_WINDOWS (2) times. Without
 * re-measures, the bracket walks one way only and each point doubles or halves the distance to the
 * end of [min, max]; each bisection point keeps hi − lo ≤ ⌈(hi − lo)/2⌉ and step(lo) only grows as
 * lo grows. Every measurement, re-measures included, counts against maxPoints and the budget.
 *
 * `frontier`: the knee of throughput per GPU against concurrency (libs/stats `knee`, an elasticity
 * fall ≥ 0.5 on the isotonic fit), its candidate points, or "no knee"; at most KNEE_REFINEMENTS
 * points split the intervals beside a knee, none when there is none.
 */
import type { Slo } from '@infersweep/topology';
import { resolutionStep, searchCap } from '@infersweep/core';
import { knee, MIN_DROP } from '@infersweep/stats';
import type {
  Bracket,
  PointState,
  PointSummary,
  PointWindow,
  SearchResult,
  SweepProgress,
  SweepSearch,
} from './contract';
import { limitStep } from './limit';
import { nextPoint } from './state';

interface SearchStep {
  concurrency: number;
  reason: string;
  /** measure this (already measured) concurrency again, a fresh window */
  remeasure?: boolean;
}

export type SearchDecision =
  | {
      done: false;
      concurrency: number;
      reason: string;
      remeasure: boolean;
      evidence: string[];
      standing: SearchResult;
    }
  | { done: true; result: SearchResult & { stoppedBy: NonNullable<SearchResult['stoppedBy']> } };

/**
 * Longest excerpt of a failure a search evidence line carries, characters. Evidence is copied into
 * every later search point and carried through continue-as-new, so a server's log tail (tens of KB
 * of a crashing engine) must not enter it: the first line of the error, capped, does.
 */
export const EVIDENCE_EXCERPT_CHARS = 200;

const excerpt = (text: string): string => {
  const first = text.split('\n', 1)[0]!.trim();
  return first.length > EVIDENCE_EXCERPT_CHARS ? `${first.slice(0, EVIDENCE_EXCERPT_CHARS - 1)}…` : first;
};

/** Why a settled point fails the SLO (empty: it meets it). Invalid, failed and skipped points fail. */
export function sloViolations(slo: Slo | undefined, p: PointState): string[] {
  if (p.status === 'skipped') return [`skipped${p.lastError ? ` (${excerpt(p.lastError)})` : ''}`];
  if (p.status === 'failed') return [`failed${p.lastError ? `: ${excerpt(p.lastError)}` : ''}`];
  const s = p.summary;
  if (p.status === 'invalid' || !s || !s.valid)
    return [`invalid (past saturation)${s?.reasons.length ? `: ${excerpt(s.reasons.join('; '))}` : ''}`];
  const out: string[] = [];
  const check = (name: string, limits: { p50?: number; p99?: number } | undefined, p50?: number, p99?: number) => {
    for (const [pct, limit, got] of [
      ['p50', limits?.p50, p50],
      ['p99', limits?.p99, p99],
    ] as const) {
      if (limit === undefined) continue;
      if (got === undefined) out.push(`${name} ${pct} not measured`);
      else if (got > limit) out.push(`${name} ${pct} ${got.toFixed(1)} ms > ${limit} ms`);
    }
  };
  check('TTFT', slo?.ttftMs, s.ttftP50Ms, s.ttftP99Ms);
  check('ITL', slo?.itlMs, s.itlP50Ms, s.itlP99Ms);
  check('E2E', slo?.e2elMs, s.e2elP50Ms, s.e2elP99Ms);
  if (slo?.maxErrorRate !== undefined) {
    const rate = s.requestsProfiled ? (s.requestsFailed ?? 0) / s.requestsProfiled : undefined;
    if (rate === undefined) out.push('error rate not measured');
    else if (rate > slo.maxErrorRate) out.push(`error rate ${rate.toFixed(4)} > ${slo.maxErrorRate}`);
  }
  return [...out, ...goodputViolations(slo, s)];
}

/**
 * Why a valid point's summary fails the SLO's per-request bounds (goodput: good / profiled requests
 * below the attainment, as a point estimate, aiperf's and GuideLLM's rule) and InferenceX's axis
 * (P90 E2E-normalized interactivity below its floor). Empty: it meets them or the SLO sets neither.
 */
export function goodputViolations(slo: Slo | undefined, s: PointSummary): string[] {
  const out: string[] = [];
  const g = slo?.goodput;
  if (g) {
    if (s.goodput === undefined) out.push('goodput not measured');
    else if (s.goodput.attainment < g.attainment)
      out.push(
        `goodput ${(100 * s.goodput.attainment).toFixed(1)} % (${s.goodput.good}/${s.goodput.total} good) < ${100 * g.attainment} %`,
      );
  }
  const floor = slo?.minE2eNormInteractivityP90;
  if (floor !== undefined) {
    const got = s.e2eNormInteractivityP90;
    if (got === undefined) out.push('P90 E2E-normalized interactivity not measured');
    else if (got < floor) out.push(`P90 E2E-normalized interactivity ${got.toFixed(1)} tok/s/user < ${floor}`);
  }
  return out;
}

/** Points the frontier may add around a knee: one split on each side, never a chase after noise. */
export const KNEE_REFINEMENTS = 2;

/**
 * The knee of throughput per GPU against concurrency (libs/stats `knee`: on the isotonic fit of log
 * throughput against log concurrency, an interior point where the elasticity falls by ≥ 0.5; the
 * candidates are every point whose fall reaches it). No candidate: "no knee", and no point is added
 * for it. With a knee, at most KNEE_REFINEMENTS points split the intervals beside it (log midpoint).
 */
function kneeStep(s: SweepSearch, points: readonly PointState[]): { bracket: Bracket; next?: SearchStep } {
  const curve = points
    .filter((p) => p.status === 'done' && p.summary?.valid && (p.summary.totalThroughputPerGpu ?? 0) > 0)
    .map((p) => ({ concurrency: p.concurrency, throughput: p.summary!.totalThroughputPerGpu! }))
    .sort((a, b) => a.concurrency - b.concurrency);
  if (curve.length < 3)
    return {
      bracket: { concurrency: null, status: 'unresolved', text: `${curve.length} valid point(s): a knee needs 3` },
    };
  const k = knee(curve);
  if (k.knee === null)
    return {
      bracket: {
        concurrency: null,
        status: 'found',
        text: `no knee (no elasticity fall ≥ ${MIN_DROP} over ${curve.length} valid points)`,
        candidates: [],
      },
    };
  const i = curve.findIndex((p) => p.concurrency === k.knee);
  const left = curve[i - 1]!.concurrency;
  const right = curve[i + 1]!.concurrency;
  const drop = k.drops.find((d) => d.concurrency === k.knee)!.drop;
  const bracket: Bracket = {
    concurrency: k.knee,
    below: left,
    above: right,
    status: 'found',
    text: `c=${k.knee} (elasticity falls by ${drop.toFixed(2)} between c=${left} and c=${right}; candidates ${k.candidates.join(', ')})`,
    ci: { lower: Math.min(...k.candidates), upper: Math.max(...k.candidates) },
    candidates: k.candidates,
  };
  const refined = points.filter((p) => p.origin === 'search' && p.searchReason?.startsWith('frontier')).length;
  if (refined >= KNEE_REFINEMENTS) return { bracket };
  const taken = new Set(points.map((p) => p.concurrency));
  const wider = [
    [left, k.knee],
    [k.knee, right],
  ]
    .filter(([a, b]) => b! - a! > resolutionStep(s.resolution, a!))
    .sort(([a1, b1], [a2, b2]) => b2! / a2! - b1! / a1!);
  for (const [a, b] of wider) {
    const mid = Math.round(Math.sqrt(a! * b!));
    if (mid > a! && mid < b! && !taken.has(mid))
      return {
        bracket: { ...bracket, status: 'unresolved' },
        next: {
          concurrency: mid,
          reason: `frontier: the elasticity falls at c=${k.knee}; c=${mid} splits [${a}, ${b}]`,
        },
      };
  }
  return { bracket };
}

/** Validity alone (no SLO): the frontier's range, doubling until a point is invalid. */
function validityStep(s: SweepSearch, points: readonly PointState[]): SearchStep | undefined {
  const st = limitStep({ ...s, slo: undefined }, points);
  return st.next && !st.next.reason.startsWith('bisect') && !st.next.remeasure ? st.next : undefined;
}

/**
 * The next point to measure, or the search's result. Call it when every configured point has
 * settled; `points` are all the sweep's points (configured and added, any status).
 */
export function nextSearchPoint(s: SweepSearch, points: readonly PointState[]): SearchDecision {
  const remeasures = points.reduce((n, p) => n + (p.windows?.length ?? 0), 0);
  const addedPoints = points.filter((p) => p.origin === 'search').length;
  // every measurement the search asked for counts against its cap: added points and re-measures
  const added = addedPoints + remeasures;
  const planned = points.length - addedPoints;
  const { cap, by } = searchCap({ ...s, maxPoints: s.maxAddedPoints }, planned);
  const wantsLimit = s.goal.includes('slo-limit');
  const wantsKnee = s.goal.includes('frontier');
  const lim = wantsLimit ? limitStep(s, points) : undefined;
  const knee = wantsKnee ? kneeStep(s, points) : undefined;
  const taken = new Set(points.map((p) => p.concurrency));
  // frontier alone brackets the valid range only (no bisection of the validity boundary)
  const first = lim ? lim.next : validityStep(s, points);
  const candidates = [first, ...(first || !knee ? [] : [knee.next])].filter(
    (n): n is SearchStep => n !== undefined && (n.remeasure === true || !taken.has(n.concurrency)),
  );
  const standing: SearchResult = {
    ...(lim ? { limit: lim.bracket } : {}),
    ...(knee ? { knee: knee.bracket } : {}),
    pointsAdded: added,
  };
  const next = candidates[0];
  if (next === undefined) return { done: true, result: { ...standing, stoppedBy: 'resolved' } };
  if (added >= cap) return { done: true, result: { ...standing, stoppedBy: by } };
  const evidence = lim ? lim.lines : points.filter((p) => p.summary).map((p) => `c=${p.concurrency} ${p.status}`);
  return {
    done: false,
    concurrency: next.concurrency,
    reason: next.reason,
    remeasure: next.remeasure === true,
    evidence,
    standing,
  };
}

/**
 * The workflow's hook: the next point to run — the first unsettled one, else the point the search
 * adds (appended to the sweep's points as a search point, with its reason and evidence) or measures
 * again (its window kept in `windows`, the point pending again for a fresh window), else undefined
 * once the search has ended (its result kept in `progress.search`). Without a search: the state
 * machine's nextPoint. Deterministic: the same progress always gives the same point.
 */
export function nextPointOrSearch(p: SweepProgress, search: SweepSearch | undefined): PointState | undefined {
  const pending = nextPoint(p);
  if (pending || search === undefined || p.search?.stoppedBy) return pending;
  const d = nextSearchPoint(search, p.points);
  if (d.done) {
    p.search = d.result;
    return undefined;
  }
  p.search = d.standing;
  if (d.remeasure) {
    const pt = p.points.find((x) => x.concurrency === d.concurrency)!;
    reopenWindow(pt, d.reason);
    pt.searchEvidence = d.evidence;
    return pt;
  }
  const pt: PointState = {
    concurrency: d.concurrency,
    status: 'pending',
    attempts: 0,
    origin: 'search',
    searchReason: d.reason,
    searchEvidence: d.evidence,
  };
  p.points.push(pt);
  return pt;
}

/** Keep a settled point's window and make it pending again for a fresh one (same concurrency). */
function reopenWindow(pt: PointState, reason: string): void {
  const w: PointWindow = { status: pt.status, remeasureReason: reason };
  if (pt.summary) w.summary = pt.summary;
  if (pt.lastError !== undefined) w.lastError = pt.lastError;
  if (pt.finishedAt !== undefined) w.finishedAt = pt.finishedAt;
  pt.windows = [...(pt.windows ?? []), w];
  pt.status = 'pending';
  pt.attempts = 0;
  delete pt.summary;
  delete pt.resultPath;
  delete pt.lastError;
}

/** The window a point is on: 1 for its first measurement, 2 for the first re-measure, … */
export function pointWindow(pt: Pick<PointState, 'windows'>): number {
  return (pt.windows?.length ?? 0) + 1;
}

/**
 * The search in words, for `status`, `watch` and the report: the SLO limit and the knee with the
 * points that bracket them, then each added point and each re-measure and why. Empty for a sweep
 * without a search.
 */
export function searchLines(p: Pick<SweepProgress, 'points' | 'search'>): string[] {
  const added = p.points.filter((pt) => pt.origin === 'search');
  if (p.search === undefined && added.length === 0) return [];
  const s = p.search;
  const state = s?.stoppedBy ? `ended: ${s.stoppedBy}` : 'searching';
  const lines = [`${p.points.length - added.length} configured + ${added.length} added point(s), ${state}`];
  if (s?.limit)
    lines.push(
      `SLO limit ${s.limit.text}${s.limit.status === 'found' || s.limit.status === 'unresolved' ? '' : ` [${s.limit.status}]`}`,
    );
  if (s?.knee) lines.push(`knee ${s.knee.text}`);
  for (const pt of added) lines.push(`c=${pt.concurrency} added (${pt.searchReason ?? 'search'})`);
  for (const pt of p.points)
    for (const w of pt.windows ?? []) lines.push(`c=${pt.concurrency} measured again (${w.remeasureReason})`);
  return lines;
}
