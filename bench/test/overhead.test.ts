import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CATEGORIES,
  activitySpans,
  overheadBreakdown,
  projectedShare,
  unionLength,
  type JsonHistoryEvent,
} from '../lib/overhead';

// a real sweep history (3 points on the local stack), recorded for the workflow replay test
const fixture = join(
  __dirname,
  '..',
  '..',
  'libs',
  'orchestrator',
  'test',
  'fixtures',
  'histories',
  'v0.1.0',
  'happy-path.json',
);
const events = (JSON.parse(readFileSync(fixture, 'utf8')) as { events: JsonHistoryEvent[] }).events;

describe('activitySpans (Temporal proto-JSON history)', () => {
  it('reads every activity of a real sweep history in order, with runPoint concurrencies from the input', () => {
    const s = activitySpans(events);
    expect(s.activities.map((a) => a.type)).toEqual([
      'prepareSweep',
      'allocate',
      'launchServer',
      'waitReady',
      'runPoint',
      'runPoint',
      'runPoint',
      'captureLogs',
      'stopServer',
      'release',
      'recordHistory',
    ]);
    expect(s.activities.filter((a) => a.type === 'runPoint').map((a) => a.concurrency)).toEqual([1, 2, 4]);
    expect(s.workflowStartMs).toBe(Date.parse('2026-12-05T04:01:03.122Z'));
    expect(s.workflowEndMs).toBe(Date.parse('2026-12-05T04:02:44.398Z'));
    expect(s.firstWorkflowTaskMs).toBe(Date.parse('2026-12-05T04:01:03.305Z'));
    for (const a of s.activities) {
      expect(a.startedMs).not.toBeNull();
      expect(a.scheduledMs).toBeLessThanOrEqual(a.startedMs!);
      expect(a.startedMs!).toBeLessThanOrEqual(a.closedMs);
    }
  });

  it('closes an activity still open at the end of the history at the last event', () => {
    const cut = events.slice(
      0,
      events.findIndex(
        (e) =>
          e.activityTaskCompletedEventAttributes &&
          e.eventId !== '8' &&
          events.find((x) => x.eventId === e.activityTaskCompletedEventAttributes!.scheduledEventId)
            ?.activityTaskScheduledEventAttributes?.activityType?.name === 'runPoint',
      ),
    );
    const s = activitySpans(cut);
    const open = s.activities.find((a) => a.type === 'runPoint')!;
    expect(open.closedMs).toBe(s.workflowEndMs);
  });

  it('refuses an empty history', () => {
    expect(() => activitySpans([])).toThrow(/empty history/);
  });
});

describe('overheadBreakdown', () => {
  const spans = activitySpans(events);
  const runs = spans.activities.filter((a) => a.type === 'runPoint');
  // each point's client: starts 1 s into the activity, warms up 2 s, profiles 5 s, ends 0.5 s before the activity closes
  const points = runs.map((a) => ({
    concurrency: a.concurrency!,
    clientStartMs: a.startedMs! + 1000,
    profileStartMs: a.startedMs! + 3000,
    profileEndMs: a.startedMs! + 8000,
    clientEndMs: a.closedMs - 500,
  }));
  const r = overheadBreakdown({ ...spans, points });

  it('accounts for every millisecond of the sweep exactly once', () => {
    const sum = CATEGORIES.reduce((s, c) => s + r.byCategory[c], 0);
    expect(sum).toBeCloseTo(r.wallMs, 6);
    expect(r.wallMs).toBe(spans.workflowEndMs - spans.workflowStartMs);
  });

  it('splits each point at its record: drain gate, warmup, profiled window, tail', () => {
    expect(r.points).toHaveLength(3);
    for (const [i, p] of r.points.entries()) {
      const a = runs[i]!;
      expect(p.drainGateMs).toBe(1000);
      expect(p.warmupMs).toBe(2000);
      expect(p.profiledMs).toBe(5000);
      expect(p.tailMs).toBe(a.closedMs - a.startedMs! - 8000);
      expect(p.outsideShare).toBeCloseTo(1 - 5000 / p.activityMs, 9);
    }
    expect(r.profiledMs).toBe(15_000);
    expect(r.outsideMs).toBe(r.wallMs - 15_000);
    expect(r.beyondStartupMs).toBe(r.outsideMs - r.byCategory['readiness (engine start-up)']);
    expect(r.byCategory['readiness (engine start-up)']).toBeGreaterThan(0);
    expect(r.byCategory.teardown).toBeGreaterThan(0);
    expect(r.byCategory['allocation wait']).toBeGreaterThan(0);
    expect(r.byCategory['waiting for a worker (start → first workflow task)']).toBe(183);
  });

  it('counts a point without a matching record (a failed attempt) as overhead, never as profiled time', () => {
    const r2 = overheadBreakdown({ ...spans, points: points.slice(1) });
    expect(r2.points).toHaveLength(2);
    expect(r2.profiledMs).toBe(10_000);
    // a record from another attempt (outside this activity) does not count either
    const moved = [
      { ...points[0]!, clientStartMs: points[0]!.clientStartMs - 60_000, clientEndMs: points[0]!.clientEndMs - 60_000 },
      ...points.slice(1),
    ];
    expect(overheadBreakdown({ ...spans, points: moved }).profiledMs).toBe(10_000);
  });

  it('projects the fixed costs onto longer windows', () => {
    const p = projectedShare(r, 1800);
    const startup = r.byCategory['readiness (engine start-up)'];
    expect(p.beyondStartup).toBeCloseTo(r.beyondStartupMs / (r.beyondStartupMs + startup + 3 * 1_800_000), 12);
    expect(p.outside).toBeGreaterThan(p.beyondStartup);
    expect(projectedShare(r, 1800, 3600).beyondStartup).toBeLessThan(p.beyondStartup);
  });
});

describe('unionLength', () => {
  it('merges overlapping and touching intervals and ignores empty ones', () => {
    expect(unionLength([])).toBe(0);
    expect(
      unionLength([
        [0, 10],
        [5, 15],
        [20, 25],
        [25, 30],
        [40, 40],
        [50, 45],
      ]),
    ).toBe(25);
    expect(
      unionLength([
        [10, 20],
        [0, 5],
      ]),
    ).toBe(15);
  });
});
