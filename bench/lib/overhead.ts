/**
 * Orchestration overhead of one sweep (pure; unit-tested in bench/test/overhead.test.ts): where the
 * sweep's wall time goes, from its Temporal history (activity spans) and its result records (the
 * profiled windows). Everything outside the profiled windows is overhead; the engine's own start-up
 * (readiness wait) is reported apart, since no orchestrator can avoid it.
 */
export interface ActivitySpan {
  /** Activity type name as in the history (`allocate`, `runPoint`, …). */
  type: string;
  scheduledMs: number;
  /** Start of the attempt that closed the activity (null: never started, e.g. cancelled while scheduled). */
  startedMs: number | null;
  closedMs: number;
  /** For runPoint: the concurrency its input named. */
  concurrency?: number;
}

/** A point's client timeline from its result record (wall-clock ms). */
export interface PointWindow {
  concurrency: number;
  clientStartMs: number;
  profileStartMs: number | null;
  profileEndMs: number | null;
  clientEndMs: number;
}

export const CATEGORIES = [
  'prepare',
  'image import',
  'allocation wait',
  'launch',
  'readiness (engine start-up)',
  'drain gate + time guard',
  'client warmup',
  'profiled',
  'in-flight tail + record',
  'teardown',
  'other activities',
  'waiting for a worker (start → first workflow task)',
  'Temporal (queue, workflow tasks, retries)',
] as const;
export type Category = (typeof CATEGORIES)[number];

const BY_TYPE: Record<string, Category> = {
  prepareSweep: 'prepare',
  importImage: 'image import',
  allocate: 'allocation wait',
  launchServer: 'launch',
  waitReady: 'readiness (engine start-up)',
  captureLogs: 'teardown',
  stopServer: 'teardown',
  release: 'teardown',
};

export interface PointOverhead {
  concurrency: number;
  activityMs: number;
  profiledMs: number;
  drainGateMs: number;
  warmupMs: number;
  tailMs: number;
  /** Share of the point activity's time outside its profiled window. */
  outsideShare: number;
}

export interface OverheadReport {
  wallMs: number;
  byCategory: Record<Category, number>;
  profiledMs: number;
  /** Wall time outside the profiled windows. */
  outsideMs: number;
  outsideShare: number;
  /** Outside the profiled windows and beyond the engine's start-up (readiness). */
  beyondStartupMs: number;
  beyondStartupShare: number;
  points: PointOverhead[];
}

const clampSpan = (a: number, b: number): number => Math.max(0, b - a);

/** Length of the union of intervals (ms). */
export function unionLength(intervals: ReadonlyArray<readonly [number, number]>): number {
  const s = intervals
    .filter(([a, b]) => b > a)
    .map(([a, b]) => [a, b] as const)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let curA = -Infinity;
  let curB = -Infinity;
  for (const [a, b] of s) {
    if (a > curB) {
      if (curB > curA) total += curB - curA;
      curA = a;
      curB = b;
    } else curB = Math.max(curB, b);
  }
  if (curB > curA) total += curB - curA;
  return total;
}

/**
 * Split a sweep's wall time: each activity's [started, closed] span goes to its category (runPoint is
 * split by its result record: drain gate + time guard before the client starts, client warmup, the
 * profiled window, the in-flight tail and record writing); the wait for a worker to pick the workflow up
 * is its own category; the rest of the wall time (no activity running: task-queue latency, workflow
 * tasks, retry back-off) is the Temporal category.
 */
export function overheadBreakdown(input: {
  workflowStartMs: number;
  workflowEndMs: number;
  /** When a worker first picked up the workflow (its first workflow task started); omitted: no split. */
  firstWorkflowTaskMs?: number | null;
  activities: ActivitySpan[];
  points: PointWindow[];
}): OverheadReport {
  const wallMs = clampSpan(input.workflowStartMs, input.workflowEndMs);
  const byCategory = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  const points: PointOverhead[] = [];
  const windows = new Map(input.points.map((p) => [p.concurrency, p]));
  const busy: Array<[number, number]> = [];
  for (const a of input.activities) {
    if (a.startedMs === null) continue;
    const span = clampSpan(a.startedMs, a.closedMs);
    busy.push([a.startedMs, a.closedMs]);
    if (a.type !== 'runPoint') {
      byCategory[BY_TYPE[a.type] ?? 'other activities'] += span;
      continue;
    }
    const w = a.concurrency === undefined ? undefined : windows.get(a.concurrency);
    // a failed/retried point attempt without a record (or a record from another attempt) is all overhead
    const inside = w && w.clientStartMs >= a.startedMs - 1000 && w.clientEndMs <= a.closedMs + 1000;
    if (!w || !inside || w.profileStartMs === null || w.profileEndMs === null) {
      byCategory['drain gate + time guard'] += span;
      continue;
    }
    const cs = Math.max(a.startedMs, w.clientStartMs);
    const ps = Math.max(cs, w.profileStartMs);
    const pe = Math.min(Math.max(ps, w.profileEndMs), a.closedMs);
    const drainGateMs = clampSpan(a.startedMs, cs);
    const warmupMs = clampSpan(cs, ps);
    const profiledMs = clampSpan(ps, pe);
    const tailMs = clampSpan(pe, a.closedMs);
    byCategory['drain gate + time guard'] += drainGateMs;
    byCategory['client warmup'] += warmupMs;
    byCategory.profiled += profiledMs;
    byCategory['in-flight tail + record'] += tailMs;
    points.push({
      concurrency: w.concurrency,
      activityMs: span,
      profiledMs,
      drainGateMs,
      warmupMs,
      tailMs,
      outsideShare: span > 0 ? 1 - profiledMs / span : 0,
    });
  }
  if (input.firstWorkflowTaskMs !== undefined && input.firstWorkflowTaskMs !== null) {
    const pickUp: [number, number] = [input.workflowStartMs, Math.min(input.firstWorkflowTaskMs, input.workflowEndMs)];
    byCategory['waiting for a worker (start → first workflow task)'] = unionLength([pickUp]);
    busy.push(pickUp);
  }
  byCategory['Temporal (queue, workflow tasks, retries)'] = Math.max(0, wallMs - unionLength(busy));
  const profiledMs = byCategory.profiled;
  const outsideMs = Math.max(0, wallMs - profiledMs);
  const beyondStartupMs = Math.max(0, outsideMs - byCategory['readiness (engine start-up)']);
  return {
    wallMs,
    byCategory,
    profiledMs,
    outsideMs,
    outsideShare: wallMs > 0 ? outsideMs / wallMs : 0,
    beyondStartupMs,
    beyondStartupShare: wallMs > 0 ? beyondStartupMs / wallMs : 0,
    points,
  };
}

/**
 * What the same fixed costs would weigh with another profile window per point (e.g. the canonical
 * 1800 s): the measured non-profiled time is kept, each point's window is replaced. An extrapolation,
 * labelled as such where printed.
 */
export function projectedShare(
  r: OverheadReport,
  profileSeconds: number,
  startupSeconds?: number,
): { outside: number; beyondStartup: number } {
  const n = r.points.length;
  const startup = startupSeconds === undefined ? r.byCategory['readiness (engine start-up)'] : startupSeconds * 1000;
  const fixedBeyond = r.beyondStartupMs;
  const wall = fixedBeyond + startup + n * profileSeconds * 1000;
  return { outside: wall > 0 ? (fixedBeyond + startup) / wall : 0, beyondStartup: wall > 0 ? fixedBeyond / wall : 0 };
}

/** A history event in Temporal's proto JSON (what `historyToJSON` and `temporal workflow show -o json` give). */
export interface JsonHistoryEvent {
  eventId: string;
  eventTime: string;
  eventType: string;
  activityTaskScheduledEventAttributes?: {
    activityType?: { name?: string };
    input?: { payloads?: Array<{ metadata?: Record<string, string>; data?: string }> };
  };
  activityTaskStartedEventAttributes?: { scheduledEventId: string };
  activityTaskCompletedEventAttributes?: { scheduledEventId: string };
  activityTaskFailedEventAttributes?: { scheduledEventId: string };
  activityTaskTimedOutEventAttributes?: { scheduledEventId: string };
  activityTaskCanceledEventAttributes?: { scheduledEventId: string };
}

/** The first JSON payload of an activity input (json/plain, base64), or undefined. */
function firstJsonArg(a: NonNullable<JsonHistoryEvent['activityTaskScheduledEventAttributes']>): unknown {
  const p = a.input?.payloads?.[0];
  if (!p?.data) return undefined;
  try {
    return JSON.parse(Buffer.from(p.data, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Activity spans and the workflow's start/end from a history (proto JSON events). An activity still
 * open when the history ends closes at the last event. runPoint spans carry the concurrency their input names.
 */
export function activitySpans(events: readonly JsonHistoryEvent[]): {
  workflowStartMs: number;
  workflowEndMs: number;
  firstWorkflowTaskMs: number | null;
  activities: ActivitySpan[];
} {
  if (events.length === 0) throw new Error('activitySpans: empty history');
  const t = (e: JsonHistoryEvent): number => Date.parse(e.eventTime);
  const byId = new Map<string, ActivitySpan>();
  const order: ActivitySpan[] = [];
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) {
      const span: ActivitySpan = {
        type: s.activityType?.name ?? 'unknown',
        scheduledMs: t(e),
        startedMs: null,
        closedMs: NaN,
      };
      if (span.type === 'runPoint') {
        const c = (firstJsonArg(s) as { concurrency?: unknown } | undefined)?.concurrency;
        if (typeof c === 'number') span.concurrency = c;
      }
      byId.set(e.eventId, span);
      order.push(span);
      continue;
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const span = byId.get(started.scheduledEventId);
      if (span) span.startedMs = t(e);
      continue;
    }
    const closed =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (closed) {
      const span = byId.get(closed.scheduledEventId);
      if (span) span.closedMs = t(e);
    }
  }
  const end = t(events[events.length - 1]!);
  for (const s of order) if (Number.isNaN(s.closedMs)) s.closedMs = end;
  const firstTask = events.find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_STARTED');
  return {
    workflowStartMs: t(events[0]!),
    workflowEndMs: end,
    firstWorkflowTaskMs: firstTask ? t(firstTask) : null,
    activities: order,
  };
}
