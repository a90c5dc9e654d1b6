/**
 * Adaptive points: which concurrency the sweep measures next, decided from the points measured so
 * far. Pure and deterministic (workflow code calls it between points; no I/O, no clock, no
 * randomness), so a replayed or continued sweep makes the same decisions.
 *
 * `slo-limit`: the largest concurrency meeting the SLO. Bracket it (double from the highest passing
 * point until a point fails or maxConcurrency passes; halve from the lowest failing point until one
 * passes or minConcurrency fails), then bisect the bracket [lo, hi) until hi − lo ≤ the resolution.
 * A point past saturation (invalid: queueing refused requests, a drain that never ended, …), a
 * failed point and a point the operator skipped are evidence that the SLO fails there, never a
 * reason to stop the sweep. Noise does not break the bound: lo is the highest passing point below
 * the lowest failing one, and every bisection point lies strictly inside (lo, hi).
 *
 * Proven bound (searchPointBound in libs/core/src/search-bounds.ts): at most ⌈log2(max/min)⌉ bracket points plus
 * ⌈log2((max − min)/step(min))⌉ bisection points, where step(c) is the resolution at c (absolute n,
 * or max(1, ⌊c·relative⌋)). The bracket walks one way only (up while everything passes, down while
 * everything fails) and each point doubles or halves the distance to the end of [min, max]; each
 * bisection point keeps hi − lo ≤ ⌈(hi − lo)/2⌉ and step(lo) only grows as lo grows.
 *
 * `frontier`: points where the Pareto curve of throughput per GPU against interactivity bends most:
 * the valid points sorted by concurrency, the knee is the interior point whose two segments (in
 * axes normalised to the largest value) turn by the largest angle; the next point halves (in
 * log-concurrency) the wider interval beside the knee, until both are within the resolution.
 */
import type { Slo } from '@infersweep/topology';
import { resolutionStep, searchCap } from '@infersweep/core';
import type { Bracket, PointState, PointSummary, SearchResult, SweepProgress, SweepSearch } from './contract';
import { nextPoint } from './state';

export type SearchDecision =
  | { done: false; concurrency: number; reason: string; evidence: string[]; standing: SearchResult }
  | { done: true; result: SearchResult & { stoppedBy: NonNullable<SearchResult['stoppedBy']> } };

const settled = (p: PointState) =>
  p.status === 'done' || p.status === 'invalid' || p.status === 'failed' || p.status === 'skipped';

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

interface Evidence {
  passes: number[];
  fails: number[];
  lines: string[];
}

function evidenceOf(slo: Slo | undefined, points: readonly PointState[]): Evidence {
  const e: Evidence = { passes: [], fails: [], lines: [] };
  for (const p of [...points].filter(settled).sort((a, b) => a.concurrency - b.concurrency)) {
    const v = sloViolations(slo, p);
    (v.length === 0 ? e.passes : e.fails).push(p.concurrency);
    e.lines.push(`c=${p.concurrency} ${v.length === 0 ? 'meets the SLO' : `fails: ${v.join('; ')}`}`);
  }
  return e;
}

/** The current SLO-limit bracket from the evidence, and the point that narrows it (undefined: resolved). */
function limitStep(s: SweepSearch, e: Evidence): { bracket: Bracket; next?: { concurrency: number; reason: string } } {
  const hi = e.fails.length > 0 ? Math.min(...e.fails) : undefined;
  const below = e.passes.filter((c) => hi === undefined || c < hi);
  const lo = below.length > 0 ? Math.max(...below) : undefined;
  const { minConcurrency: min, maxConcurrency: max } = s;
  if (hi === undefined && lo === undefined) {
    return {
      bracket: { concurrency: null, status: 'unresolved', text: 'no point measured yet' },
      next: { concurrency: min, reason: 'start' },
    };
  }
  if (hi === undefined) {
    const at = lo!;
    if (at >= max)
      return {
        bracket: {
          concurrency: at,
          below: at,
          status: 'at-max',
          text: `c=${at} (maxConcurrency) meets the SLO: the limit is above the search range`,
        },
      };
    const next = Math.min(2 * at, max);
    return {
      bracket: { concurrency: at, below: at, status: 'unresolved', text: `≥ ${at} (no failing point yet)` },
      next: { concurrency: next, reason: `bracket: c=${at} meets the SLO, doubling to c=${next}` },
    };
  }
  if (lo === undefined) {
    if (hi <= min)
      return {
        bracket: {
          concurrency: null,
          above: hi,
          status: 'never-meets',
          text: `c=${hi} (minConcurrency) fails the SLO`,
        },
      };
    const next = Math.max(Math.floor(hi / 2), min);
    return {
      bracket: { concurrency: null, above: hi, status: 'unresolved', text: `< ${hi} (no passing point yet)` },
      next: { concurrency: next, reason: `bracket: c=${hi} fails the SLO, halving to c=${next}` },
    };
  }
  const step = resolutionStep(s.resolution, lo);
  if (hi - lo <= step)
    return {
      bracket: {
        concurrency: lo,
        below: lo,
        above: hi,
        status: 'found',
        text: `${lo} (c=${lo} meets the SLO, c=${hi} fails; resolution ${step})`,
      },
    };
  const mid = Math.floor((lo + hi) / 2);
  return {
    bracket: { concurrency: lo, below: lo, above: hi, status: 'unresolved', text: `in [${lo}, ${hi})` },
    next: {
      concurrency: mid,
      reason: `bisect: c=${lo} meets the SLO, c=${hi} fails; c=${mid} halves the bracket (resolution ${step})`,
    },
  };
}

/** The knee of the valid points' throughput/interactivity curve and the point that refines it. */
function kneeStep(
  s: SweepSearch,
  points: readonly PointState[],
): { bracket: Bracket; next?: { concurrency: number; reason: string } } {
  const curve = points
    .filter(
      (p) =>
        p.status === 'done' &&
        p.summary?.valid &&
        p.summary.totalThroughputPerGpu !== undefined &&
        p.summary.interactivityP50 !== undefined,
    )
    .map((p) => ({ c: p.concurrency, x: p.summary!.interactivityP50!, y: p.summary!.totalThroughputPerGpu! }))
    .sort((a, b) => a.c - b.c);
  if (curve.length < 3)
    return {
      bracket: { concurrency: null, status: 'unresolved', text: `${curve.length} valid point(s): a knee needs 3` },
    };
  const xMax = Math.max(...curve.map((p) => p.x)) || 1;
  const yMax = Math.max(...curve.map((p) => p.y)) || 1;
  const angle = (a: (typeof curve)[0], b: (typeof curve)[0]) => Math.atan2((b.y - a.y) / yMax, (b.x - a.x) / xMax);
  let best = 1;
  let bend = -1;
  for (let i = 1; i < curve.length - 1; i++) {
    let turn = Math.abs(angle(curve[i]!, curve[i + 1]!) - angle(curve[i - 1]!, curve[i]!));
    if (turn > Math.PI) turn = 2 * Math.PI - turn;
    if (turn > bend + 1e-12) [best, bend] = [i, turn];
  }
  const k = curve[best]!;
  const left = curve[best - 1]!;
  const right = curve[best + 1]!;
  const bracket: Bracket = {
    concurrency: k.c,
    below: left.c,
    above: right.c,
    status: 'found',
    text: `c=${k.c} (turn ${((bend * 180) / Math.PI).toFixed(0)}° between c=${left.c} and c=${right.c})`,
  };
  const taken = new Set(points.map((p) => p.concurrency));
  const wider = [
    [left.c, k.c],
    [k.c, right.c],
  ]
    .filter(([a, b]) => b! - a! > resolutionStep(s.resolution, a!))
    .sort(([a1, b1], [a2, b2]) => b2! / a2! - b1! / a1!);
  for (const [a, b] of wider) {
    const mid = Math.round(Math.sqrt(a! * b!));
    if (mid > a! && mid < b! && !taken.has(mid))
      return {
        bracket: { ...bracket, status: 'unresolved' },
        next: { concurrency: mid, reason: `frontier: the curve bends most at c=${k.c}; c=${mid} splits [${a}, ${b}]` },
      };
  }
  return { bracket };
}

/**
 * The next point to measure, or the search's result. Call it when every configured point has
 * settled; `points` are all the sweep's points (configured and added, any status).
 */
export function nextSearchPoint(s: SweepSearch, points: readonly PointState[]): SearchDecision {
  const added = points.filter((p) => p.origin === 'search').length;
  const planned = points.length - added;
  const { cap, by } = searchCap({ ...s, maxPoints: s.maxAddedPoints }, planned);
  const wantsLimit = s.goal.includes('slo-limit');
  const wantsKnee = s.goal.includes('frontier');
  // without an SLO, the frontier's bracket is validity alone: double until a point is invalid
  const e = evidenceOf(wantsLimit ? s.slo : undefined, points);
  const lim = limitStep(s, e);
  const knee = wantsKnee ? kneeStep(s, points) : undefined;
  const taken = new Set(points.map((p) => p.concurrency));
  // frontier alone brackets the valid range only (no bisection of the validity boundary)
  const limNext = wantsLimit || !lim.next?.reason.startsWith('bisect') ? lim.next : undefined;
  const candidates = [limNext, ...(limNext || !knee ? [] : [knee.next])].filter(
    (n): n is { concurrency: number; reason: string } => n !== undefined && !taken.has(n.concurrency),
  );
  const standing: SearchResult = {
    ...(wantsLimit ? { limit: lim.bracket } : {}),
    ...(knee ? { knee: knee.bracket } : {}),
    pointsAdded: added,
  };
  const next = candidates[0];
  if (next === undefined) return { done: true, result: { ...standing, stoppedBy: 'resolved' } };
  if (added >= cap) return { done: true, result: { ...standing, stoppedBy: by } };
  return { done: false, concurrency: next.concurrency, reason: next.reason, evidence: e.lines, standing };
}

/**
 * The workflow's hook: the next point to run — the first unsettled one, else the point the search
 * adds (appended to the sweep's points as a search point, with its reason and evidence), else
 * undefined once the search has ended (its result kept in `progress.search`). Without a search: the
 * state machine's nextPoint. Deterministic: the same progress always gives the same point.
 */
export function nextPointOrSearch(p: SweepProgress, search: SweepSearch | undefined): PointState | undefined {
  const pending = nextPoint(p);
  if (pending || search === undefined || p.search?.stoppedBy) return pending;
  const d = nextSearchPoint(search, p.points);
  if (d.done) {
    p.search = d.result;
    return undefined;
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
  p.search = d.standing;
  return pt;
}

/**
 * The search in words, for `status`, `watch` and the report: the SLO limit and the knee with the
 * points that bracket them, then each added point and why. Empty for a sweep without a search.
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
  return lines;
}
