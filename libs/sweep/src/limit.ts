/**
 * The SLO limit under noise (docs/search.md "The SLO limit under noise"; the seeded simulation in
 * libs/sweep/test/limit.sim.test.ts). Pure and deterministic: workflow code calls it.
 *
 * Evidence. Each measured window of a point is one of:
 * - measured (valid): per SLO bound a margin (log(bound/estimate) for a latency, attainment − target
 *   for goodput) and its standard error (the bootstrap SD of the log statistic over the window's
 *   requests, PointSummary.logSe; the Wilson interval's half-width / 1.96 for goodput; 0 when the
 *   record carries none, which makes the window's verdict certain);
 * - load: invalid because of load (error rate, drain, coverage, context overflow, any reason not
 *   listed below; a cancelled run too: the client cancels on failed requests and on a warmup that
 *   does not drain), failed or skipped: a certain fail, saturation is evidence;
 * - not-load: invalid for a reason load does not cause (an idle DP rank, missing server metrics, no
 *   cached tokens, an unsafe override): measured again; a point with no other window is
 *   unmeasurable: no evidence either way, left out of the fit, never proposed again (docs/statistics.md
 *   "Eighth registration");
 * - client: the client could not hold the load (client or host saturated, concurrency not held):
 *   measured again; if it stays client-limited it is no evidence about the server at all.
 *
 * A point's pass probability: per bound, the windows' margins pooled by inverse variance, P =
 * Φ(margin / se) (certain 0/1 votes averaged when a window has no se); the point's P is the smallest
 * over the bounds, and that bound is the binding one. The fit: P made non-increasing in concurrency
 * by weighted PAVA (weights: windows). The limit: the largest measured concurrency whose fitted P
 * exceeds ½; the bracket's other end: the next measured one. The 95 % interval: from the largest
 * point with fitted P ≥ 0.975 to one below the smallest with fitted P ≤ 0.025.
 *
 * Next measurement, in this order: a point whose latest window is not-load or client; a point in a
 * raw pass-above-fail contradiction (the one with P nearest ½); a bracket end whose P lies in
 * (0.2, 0.8) — each re-measured at most MAX_WINDOWS − 1 times — then the bracket/bisection steps of
 * the noise-free search on the fitted verdicts.
 */
import { resolutionStep } from '@infersweep/core';
import { isotonic, normalCdf, UNCERTAIN_BAND } from '@infersweep/stats';
import type { Slo } from '@infersweep/topology';
import type { Bracket, PointState, PointSummary, PointWindow, SloStatistic, SweepSearch } from './contract';

/** Windows a point may have: the first and at most one re-measure. */
export const MAX_WINDOWS = 2;
/** A point is confidently passing (failing) at fitted P ≥ 1 − α/2 (≤ α/2): the 95 % interval's ends. */
export const CONFIDENT = 0.975;

export type WindowClass = 'measured' | 'load' | 'not-load' | 'client';

const CLIENT_REASONS = ['client_saturated', 'host_saturated', 'concurrency_not_held'];
const NOT_LOAD_REASONS = ['idle_dp_rank', 'server_metrics_missing', 'no_cached_tokens', 'unsafe_override'];

/** Why an invalid window is invalid, by its reason tags: load wins, then the client, else not load. */
export function invalidClass(reasons: readonly string[]): Exclude<WindowClass, 'measured'> {
  const tags = reasons.map((r) => r.split(':', 1)[0]!.trim());
  if (tags.length === 0 || tags.some((t) => !CLIENT_REASONS.includes(t) && !NOT_LOAD_REASONS.includes(t)))
    return 'load';
  return tags.some((t) => CLIENT_REASONS.includes(t)) ? 'client' : 'not-load';
}

interface BoundMargin {
  name: string;
  /** > 0: the bound holds */
  margin: number;
  se: number;
}

interface WindowEvidence {
  cls: WindowClass;
  margins: BoundMargin[];
}

type Window = Pick<PointWindow, 'status' | 'summary' | 'lastError'>;

const upper = (name: string, stat: SloStatistic, bound: number | undefined, s: PointSummary): BoundMargin[] => {
  if (bound === undefined) return [];
  const got = s[stat];
  // not measured: a certain fail (the SLO cannot be shown to hold)
  if (got === undefined || !(got > 0)) return [{ name, margin: -1, se: 0 }];
  return [{ name, margin: Math.log(bound / got), se: s.logSe?.[stat] ?? 0 }];
};

/** The margins of a valid window against every bound of the SLO (names as `sloViolations` prints them). */
function margins(slo: Slo | undefined, s: PointSummary): BoundMargin[] {
  const out: BoundMargin[] = [
    ...upper('TTFT p50', 'ttftP50Ms', slo?.ttftMs?.p50, s),
    ...upper('TTFT p99', 'ttftP99Ms', slo?.ttftMs?.p99, s),
    ...upper('ITL p50', 'itlP50Ms', slo?.itlMs?.p50, s),
    ...upper('ITL p99', 'itlP99Ms', slo?.itlMs?.p99, s),
    ...upper('E2E p50', 'e2elP50Ms', slo?.e2elMs?.p50, s),
    ...upper('E2E p99', 'e2elP99Ms', slo?.e2elMs?.p99, s),
  ];
  if (slo?.maxErrorRate !== undefined) {
    const rate = s.requestsProfiled ? (s.requestsFailed ?? 0) / s.requestsProfiled : undefined;
    out.push({ name: 'error rate', margin: rate === undefined ? -1 : slo.maxErrorRate - rate, se: 0 });
  }
  const g = slo?.goodput;
  if (g) {
    const m = s.goodput;
    out.push(
      m === undefined
        ? { name: 'goodput', margin: -1, se: 0 }
        : { name: 'goodput', margin: m.attainment - g.attainment, se: (m.upper - m.lower) / (2 * 1.96) },
    );
  }
  const floor = slo?.minE2eNormInteractivityP90;
  if (floor !== undefined) {
    const got = s.e2eNormInteractivityP90;
    out.push(
      got === undefined || !(got > 0)
        ? { name: 'P90 E2E-normalized interactivity', margin: -1, se: 0 }
        : {
            name: 'P90 E2E-normalized interactivity',
            margin: Math.log(got / floor),
            se: s.logSe?.e2eNormInteractivityP90 ?? 0,
          },
    );
  }
  return out;
}

function windowEvidence(slo: Slo | undefined, w: Window): WindowEvidence {
  if (w.status === 'failed' || w.status === 'skipped') return { cls: 'load', margins: [] };
  const s = w.summary;
  if (w.status === 'invalid' || !s || !s.valid) return { cls: invalidClass(s?.reasons ?? []), margins: [] };
  return { cls: 'measured', margins: margins(slo, s) };
}

/** The pass probability of one bound from its windows' margins. */
function boundPass(ms: readonly BoundMargin[]): number {
  if (ms.some((m) => !(m.se > 0))) return ms.filter((m) => m.margin >= 0).length / ms.length;
  const w = ms.map((m) => 1 / (m.se * m.se));
  const total = w.reduce((a, b) => a + b, 0);
  const margin = ms.reduce((a, m, i) => a + m.margin * w[i]!, 0) / total;
  return normalCdf(margin * Math.sqrt(total));
}

/** One measured concurrency as the limit search sees it. */
export interface LimitPoint {
  concurrency: number;
  /** windows measured (any class) */
  windows: number;
  /** the latest window's class */
  latest: WindowClass;
  /** windows that count as evidence (measured or load) */
  counted: number;
  /** P(the SLO holds here); undefined: no evidence about the server (client-limited) */
  pass?: number;
  /** the bound with the lowest pass probability ("saturation" for a load-invalid window) */
  binding?: string;
  /** every window invalid for a reason not load: no evidence either way, and not a client ceiling */
  unmeasurable?: true;
}

const settled = (s: PointState['status']) => s === 'done' || s === 'invalid' || s === 'failed' || s === 'skipped';

/** Every settled point's evidence, in concurrency order. */
export function limitPoints(slo: Slo | undefined, points: readonly PointState[]): LimitPoint[] {
  return points
    .filter((p) => settled(p.status))
    .sort((a, b) => a.concurrency - b.concurrency)
    .map((p) => {
      const ws = [...(p.windows ?? []), p].map((w) => windowEvidence(slo, w));
      const latest = ws[ws.length - 1]!.cls;
      const base = { concurrency: p.concurrency, windows: ws.length, latest };
      let counted = ws.filter((w) => w.cls === 'measured' || w.cls === 'load');
      if (counted.length === 0) {
        // every window was invalid without load: a client limit says nothing about the server, and
        // neither does a reason load does not cause (the point is unmeasurable, not a fail)
        if (ws.some((w) => w.cls === 'client')) return { ...base, counted: 0 };
        return { ...base, counted: 0, unmeasurable: true };
      }
      if (counted.some((w) => w.cls === 'load')) counted = counted.filter((w) => w.cls === 'load');
      if (counted[0]!.cls === 'load') return { ...base, counted: counted.length, pass: 0, binding: 'saturation' };
      const names = counted[0]!.margins.map((m) => m.name);
      if (names.length === 0) return { ...base, counted: counted.length, pass: 1 };
      const perBound = names.map((name, i) => ({ name, pass: boundPass(counted.map((w) => w.margins[i]!)) }));
      const binding = perBound.reduce((a, b) => (b.pass < a.pass ? b : a));
      return { ...base, counted: counted.length, pass: binding.pass, binding: binding.name };
    });
}

export interface LimitStep {
  bracket: Bracket;
  next?: { concurrency: number; reason: string; remeasure?: boolean };
  /** the evidence in words, one line per point */
  lines: string[];
}

type Next = LimitStep['next'];

const fmtP = (p: number | undefined) => (p === undefined ? 'n/a' : p.toFixed(2));

/** The monotone fit below the client ceiling: the bracket ends and the 95 % interval. */
interface LimitFit {
  /** the lowest client-limited concurrency (no evidence at or above it) */
  ceiling?: number;
  /** the points the fit uses, and their fitted pass probabilities */
  pts: LimitPoint[];
  /** concurrencies measured without evidence (unmeasurable): never proposed again */
  unmeasurable: Set<number>;
  lo?: LimitPoint;
  hi?: LimitPoint;
  ci: { lower: number | null; upper: number | null };
}

function fitLimit(all: readonly LimitPoint[]): LimitFit {
  const ceiling = all.find((p) => p.pass === undefined && !p.unmeasurable)?.concurrency;
  const pts = all.filter((p) => p.pass !== undefined && (ceiling === undefined || p.concurrency < ceiling));
  const q = pts.length
    ? isotonic(
        pts.map((p) => p.pass!),
        { weights: pts.map((p) => Math.max(1, p.counted)), increasing: false },
      )
    : [];
  const lastPass = q.reduce((k, v, i) => (v > 0.5 ? i : k), -1);
  const confidentPass = q.reduce((k, v, i) => (v >= CONFIDENT ? i : k), -1);
  const confidentFail = q.findIndex((v) => v <= 1 - CONFIDENT);
  return {
    ...(ceiling === undefined ? {} : { ceiling }),
    pts,
    unmeasurable: new Set(all.filter((p) => p.unmeasurable).map((p) => p.concurrency)),
    ...(lastPass >= 0 ? { lo: pts[lastPass]! } : {}),
    ...(pts[lastPass + 1] ? { hi: pts[lastPass + 1]! } : {}),
    ci: {
      lower: confidentPass >= 0 ? pts[confidentPass]!.concurrency : null,
      upper: confidentFail >= 0 ? pts[confidentFail]!.concurrency - 1 : null,
    },
  };
}

/** A window to measure again before the bracket moves (module doc: the order), or undefined. */
function remeasureStep(all: readonly LimitPoint[], f: LimitFit): Next {
  const again = (p: LimitPoint, why: string) => ({
    concurrency: p.concurrency,
    remeasure: true,
    reason: `re-measure c=${p.concurrency}: ${why}`,
  });
  const canRepeat = (p: LimitPoint) => p.windows < MAX_WINDOWS;
  const doubtful = all.find((p) => (p.latest === 'not-load' || p.latest === 'client') && canRepeat(p));
  if (doubtful)
    return again(
      doubtful,
      doubtful.latest === 'client' ? 'the client could not hold it' : 'invalid for a reason not load',
    );
  const nearest = (ps: LimitPoint[]) =>
    [...ps].sort((a, b) => Math.abs(a.pass! - 0.5) - Math.abs(b.pass! - 0.5) || a.concurrency - b.concurrency)[0];
  const contra = nearest(
    f.pts.filter(
      (p, i) =>
        canRepeat(p) &&
        ((p.pass! > 0.5 && f.pts.slice(0, i).some((x) => x.pass! < 0.5)) ||
          (p.pass! < 0.5 && f.pts.slice(i + 1).some((x) => x.pass! > 0.5))),
    ),
  );
  if (contra) return again(contra, `P ${fmtP(contra.pass)} contradicts the monotone fit`);
  const [bandLo, bandHi] = UNCERTAIN_BAND;
  const coin = nearest(
    [f.lo, f.hi].filter(
      (p): p is LimitPoint => p !== undefined && canRepeat(p) && p.pass! > bandLo && p.pass! < bandHi,
    ),
  );
  return coin ? again(coin, `P(meets the SLO) ${fmtP(coin.pass)} is a coin flip`) : undefined;
}

const clientText = (c: number) => `the client could not hold c=${c} (a client-side limit, not the server's)`;

/** The steps' moves around unmeasurable concurrencies (docs/statistics.md "Eighth registration"). */
interface Moves {
  /** the next doubling of c not in the set, up to max (undefined: none above c) */
  up(c: number, max: number): number | undefined;
  /** the next halving of c not in the set, down to min (undefined: none below c) */
  down(c: number, min: number): number | undefined;
  /** the concurrency in (lo, hi) not in the set nearest the midpoint, the lower on a tie */
  between(lo: number, hi: number): number | undefined;
  /** "; c=5, c=6 could not be measured (invalid for a reason not load, twice)", or "" */
  note(lo: number, hi: number): string;
}

function moves(unmeasurable: ReadonlySet<number>): Moves {
  const ok = (c: number) => !unmeasurable.has(c);
  return {
    up(c, max) {
      for (let n = Math.min(2 * c, max); n > c; n = Math.min(2 * n, max))
        if (ok(n) || n >= max) return ok(n) ? n : undefined;
      return undefined;
    },
    down(c, min) {
      for (let n = Math.max(Math.floor(c / 2), min); n < c; n = Math.max(Math.floor(n / 2), min))
        if (ok(n) || n <= min) return ok(n) ? n : undefined;
      return undefined;
    },
    between(lo, hi) {
      const mid = Math.floor((lo + hi) / 2);
      const inside = (c: number) => c > lo && c < hi;
      for (let d = 0; inside(mid - d) || inside(mid + d); d++)
        for (const c of [mid - d, mid + d]) if (inside(c) && ok(c)) return c;
      return undefined;
    },
    note(lo, hi) {
      const cs = [...unmeasurable].filter((c) => c >= lo && c <= hi).sort((a, b) => a - b);
      return cs.length
        ? `; ${cs.map((c) => `c=${c}`).join(', ')} could not be measured (invalid for a reason not load, twice)`
        : '';
    },
  };
}

/** Every point so far meets the SLO: double (below a client ceiling: halve the gap to it). */
function upwardStep(
  lo: LimitPoint,
  ceiling: number | undefined,
  searchMax: number,
  ciText: string,
  m: Moves,
  unresolved: (text: string) => Bracket,
): { bracket: Bracket; next?: Next } {
  const at = lo.concurrency;
  // the next doubling (skipping unmeasurable points); at or above a client ceiling, bisect below it
  // instead (docs/statistics.md "Ninth registration": never capped at one below the ceiling)
  const doubled = at < searchMax ? m.up(at, searchMax) : undefined;
  const next = ceiling === undefined || (doubled !== undefined && doubled < ceiling) ? doubled : m.between(at, ceiling);
  if (ceiling !== undefined && next === undefined)
    return {
      bracket: {
        concurrency: at,
        below: at,
        above: ceiling,
        status: 'client-bound',
        text: `≥ ${at}: c=${at} meets the SLO, ${clientText(ceiling)}${m.note(at, ceiling)}; ${ciText}`,
      },
    };
  // below a client ceiling every remaining case returned above: from here the range ends at maxConcurrency
  if (at >= searchMax)
    return {
      bracket: {
        concurrency: at,
        below: at,
        status: 'at-max',
        text: `c=${at} (maxConcurrency) meets the SLO: the limit is above the search range; ${ciText}`,
      },
    };
  if (next === undefined) return { bracket: unresolved(`≥ ${at}${m.note(at, searchMax)}; ${ciText}`) };
  return {
    bracket: unresolved(`≥ ${at} (no failing point yet); ${ciText}`),
    next: {
      concurrency: next,
      reason: `bracket: c=${at} meets the SLO (P ${fmtP(lo.pass)}), doubling to c=${next}${m.note(at, next)}`,
    },
  };
}

/** The noise-free bracket and bisection steps on the fitted verdicts. */
function bracketStep(s: SweepSearch, f: LimitFit, ciText: string): { bracket: Bracket; next?: Next } {
  const { lo, hi: hiPt, ceiling } = f;
  const m = moves(f.unmeasurable);
  const min = s.minConcurrency;
  const max = ceiling !== undefined ? Math.min(s.maxConcurrency, ceiling - 1) : s.maxConcurrency;
  const unresolved = (text: string): Bracket => ({
    concurrency: lo?.concurrency ?? null,
    ...(lo ? { below: lo.concurrency } : {}),
    ...(hiPt ? { above: hiPt.concurrency } : ceiling !== undefined ? { above: ceiling } : {}),
    status: 'unresolved',
    text,
  });
  if (!lo && !hiPt) {
    // the highest unmeasurable point in range (idle ranks below the DP size): start above it
    const top = Math.max(0, ...[...f.unmeasurable].filter((c) => c <= max));
    const start = top === 0 ? min : m.up(top, max);
    if (start !== undefined && start <= max)
      return {
        bracket: { concurrency: null, status: 'unresolved', text: `no point measured yet${m.note(min, max)}` },
        next: { concurrency: start, reason: top === 0 ? 'start' : `start above c=${top}${m.note(min, max)}` },
      };
    if (ceiling !== undefined)
      return {
        bracket: {
          concurrency: null,
          above: ceiling,
          status: 'client-bound',
          text: `${clientText(ceiling)}${m.note(min, ceiling)}`,
        },
      };
    return {
      bracket: { concurrency: null, status: 'unresolved', text: `no concurrency could be measured${m.note(min, max)}` },
    };
  }
  if (!hiPt) return upwardStep(lo!, ceiling, s.maxConcurrency, ciText, m, unresolved);
  const hi = hiPt.concurrency;
  if (!lo) {
    if (hi <= min)
      return {
        bracket: {
          concurrency: null,
          above: hi,
          status: 'never-meets',
          text: `c=${hi} (minConcurrency) fails the SLO (P ${fmtP(hiPt.pass)}); ${ciText}`,
        },
      };
    const next = m.down(hi, min);
    if (next === undefined) return { bracket: unresolved(`< ${hi}${m.note(min, hi)}; ${ciText}`) };
    return {
      bracket: unresolved(`< ${hi} (no passing point yet); ${ciText}`),
      next: {
        concurrency: next,
        reason: `bracket: c=${hi} fails the SLO (P ${fmtP(hiPt.pass)}), halving to c=${next}${m.note(next, hi)}`,
      },
    };
  }
  const l = lo.concurrency;
  const res = resolutionStep(s.resolution, l);
  if (hi - l <= res)
    return {
      bracket: {
        concurrency: l,
        below: l,
        above: hi,
        status: 'found',
        text: `${l}, ${ciText} (c=${l} meets the SLO, P ${fmtP(lo.pass)}; c=${hi} fails, P ${fmtP(hiPt.pass)}${hiPt.binding ? `, ${hiPt.binding}` : ''}; resolution ${res})`,
      },
    };
  const mid = m.between(l, hi);
  if (mid === undefined) return { bracket: unresolved(`in [${l}, ${hi})${m.note(l, hi)}; ${ciText}`) };
  return {
    bracket: unresolved(`in [${l}, ${hi}); ${ciText}`),
    next: {
      concurrency: mid,
      reason: `bisect: c=${l} meets the SLO (P ${fmtP(lo.pass)}), c=${hi} fails (P ${fmtP(hiPt.pass)}); c=${mid} halves the bracket (resolution ${res})${m.note(l, hi)}`,
    },
  };
}

/** The SLO limit's standing and the measurement that helps it most (none: resolved). */
export function limitStep(s: SweepSearch, points: readonly PointState[]): LimitStep {
  const all = limitPoints(s.slo, points);
  const lines = all.map(
    (p) =>
      `c=${p.concurrency} ${p.unmeasurable ? 'unmeasurable (no evidence)' : `P(meets the SLO) ${fmtP(p.pass)}`}${p.binding ? ` (${p.binding})` : ''}, ${p.windows} window(s), latest ${p.latest}`,
  );
  const f = fitLimit(all);
  const binding = f.hi?.binding ?? (f.ceiling !== undefined ? 'client (could not hold the concurrency)' : undefined);
  const extra = { ci: f.ci, ...(binding ? { binding } : {}) };
  const ciText = `95 % CI [${f.ci.lower ?? '—'}, ${f.ci.upper ?? '—'}]`;
  const again = remeasureStep(all, f);
  if (again) {
    const text = `${f.lo ? `≥ ${f.lo.concurrency}` : 'unknown'} (${again.reason}); ${ciText}`;
    const bracket: Bracket = {
      concurrency: f.lo?.concurrency ?? null,
      ...(f.lo ? { below: f.lo.concurrency } : {}),
      ...(f.hi ? { above: f.hi.concurrency } : {}),
      status: 'unresolved',
      text,
    };
    return { bracket: { ...bracket, ...extra }, next: again, lines };
  }
  const b = bracketStep(s, f, ciText);
  return { bracket: { ...b.bracket, ...extra }, ...(b.next ? { next: b.next } : {}), lines };
}
