import { describe, expect, it } from 'vitest';
import type { PointState, SweepProgress } from '@infersweep/sweep';
import { allocationJobName, deploymentTag } from '@infersweep/core';
import { exitCodeFor, ExitWith, fmtDuration, parsePointList, UsageError, EXIT } from '../src/ops/cli';
import { listQuery, type SweepView } from '../src/ops/temporal';
import { allocatingLine, pointLine, statusJson, statusText, sweepSucceeded } from '../src/ops/render';
import { PlainReporter, pointDetail, pointFraction, sweepHeader } from '../src/ops/watcher';
import { judge, jobNameStem } from '../src/actions/janitor';
import { checkCron, scheduleIdOf } from '../src/actions/schedule';
import { matchesNode } from '../src/actions/logs';
import { ConfigError } from '@infersweep/topology';

const progress = (points: PointState[], phase: SweepProgress['phase'] = 'running-point'): SweepProgress => ({
  sweepId: 'sweep-x',
  configName: 'cfg',
  configHash: 'h',
  planHash: 'p',
  orientation: 'balanced',
  cluster: 'local',
  model: 'kimi',
  policy: 'shared-server',
  phase,
  currentPoint: 8,
  points,
  allocations: [
    {
      attempt: 1,
      jobName: 'infersweep-x-a1',
      jobId: '12',
      nodes: ['node1', 'node2'],
      requestedAt: 't',
      grantedAt: 't',
      ended: 'NODE_FAIL',
      reason: 'node2 down',
    },
  ],
  maxAllocationAttempts: 3,
  startedAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  resultsDir: '/r',
});

const view = (p: SweepProgress, status: SweepView['status'] = 'RUNNING'): SweepView => ({
  workflowId: 'sweep-x',
  runId: 'r',
  type: 'sweepWorkflow',
  kind: 'sweep',
  status,
  uiLink: 'http://ui/x',
  taskQueue: 'infersweep-local',
  searchAttributes: {},
  memo: {},
  progress: p,
  live: [
    {
      concurrency: 8,
      phase: 'profiling',
      completed: 120,
      inFlight: 8,
      etaSeconds: 95,
      activity: 'runPoint',
      attempt: 1,
    },
  ],
  children: [],
});

const pts: PointState[] = [
  {
    concurrency: 4,
    status: 'done',
    attempts: 1,
    resultPath: '/r/points/c4.json',
    summary: {
      concurrency: 4,
      valid: true,
      reasons: [],
      resultPath: '/r/points/c4.json',
      reused: false,
      totalThroughputPerGpu: 420.3,
      interactivityP50: 55,
    },
  },
  { concurrency: 8, status: 'running', attempts: 2, startedAt: new Date(Date.now() - 95_000).toISOString() },
  { concurrency: 16, status: 'pending', attempts: 0 },
];

describe('exit codes and argument errors', () => {
  it('maps errors to the documented codes', () => {
    expect(exitCodeFor(new UsageError('x'))).toBe(EXIT.usage);
    expect(exitCodeFor(new ConfigError('f.yaml', [{ path: 'a', value: '1', message: 'bad' }]))).toBe(EXIT.usage);
    expect(exitCodeFor(new ExitWith(3))).toBe(3);
    expect(exitCodeFor(new Error('boom'))).toBe(EXIT.failure);
  });
  it('names a bad point list and shows the fix', () => {
    expect(parsePointList('16, 32')).toEqual([16, 32]);
    expect(() => parsePointList('16,abc')).toThrow(/--points "16,abc": expected .* e\.g\. --points 16,32/);
    expect(() => parsePointList('0')).toThrow(UsageError);
  });
  it('formats durations', () => {
    expect(fmtDuration(5)).toBe('5s');
    expect(fmtDuration(125)).toBe('2m05s');
    expect(fmtDuration(7260)).toBe('2h01m');
    expect(fmtDuration(undefined)).toBe('–');
  });
});

describe('status and progress views', () => {
  it('shows the running point with requests done, in flight and ETA from the heartbeat', () => {
    const t = statusText(view(progress(pts)));
    expect(t).toMatch(/c=8\s+running\s+profiling\s+120 requests done\s+8 in flight\s+ETA 1m35s\s+attempts 2/);
    expect(t).toMatch(/c=4\s+done\s+valid\s+420 tok\/s\/GPU/);
    expect(t).toContain('#1    job 12');
    expect(t).toContain('ended NODE_FAIL (node2 down)');
  });
  it("shows a point's InferenceX interactivity and goodput attainment with its interval", () => {
    const line = pointLine({
      ...pts[0]!,
      summary: {
        ...pts[0]!.summary!,
        e2eNormInteractivityP90: 21.5,
        goodput: { good: 96, total: 100, attainment: 0.96, lower: 0.9016, upper: 0.9843 },
      },
    });
    expect(line).toMatch(
      /55(\.0)? tok\/s\/user\s+21\.5 tok\/s\/user E2E-norm P90\s+goodput 96(\.0)? % \[90\.2, 98\.4\]/,
    );
  });
  it("shows a spec-decode point's acceptance length and a valid point's warnings", () => {
    const line = pointLine({
      ...pts[0]!,
      summary: {
        ...pts[0]!.summary!,
        specAcceptanceLength: 3.9412,
        warnings: ['collapsed_streams: 1 of 200 streamed responses read whole'],
      },
    });
    expect(line).toMatch(/valid\s.*acceptance length 3\.94\s+warnings: collapsed_streams: 1 of 200 streamed/);
    expect(pointLine(pts[0]!)).not.toMatch(/acceptance length|warnings:/);
  });
  it('shows what went wrong on an allocation without ending it (a failed log capture) and a release that failed', () => {
    const p = progress(pts);
    p.allocations = [
      {
        ...p.allocations[0]!,
        ended: undefined,
        reason: undefined,
        warnings: ['log capture of server 1 on job 12 failed: rsync exit 23'],
      },
      {
        attempt: 2,
        jobName: 'infersweep-x-a2',
        jobId: '13',
        nodes: ['node1'],
        requestedAt: 't',
        ended: 'release-failed',
        reason: 'scancel 13',
      },
    ];
    const t = statusText(view(p));
    expect(t).toMatch(/job 12 .*holding\s+warning: log capture of server 1 on job 12 failed: rsync exit 23/);
    expect(t).toContain('ended release-failed (scancel 13)');
  });
  it('status --json is the progress object plus workflow status and link', () => {
    const j = statusJson(view(progress(pts)));
    expect(j).toMatchObject({
      workflowStatus: 'RUNNING',
      uiLink: 'http://ui/x',
      phase: 'running-point',
      sweepId: 'sweep-x',
    });
    expect((j.points as PointState[]).map((p) => p.concurrency)).toEqual([4, 8, 16]);
  });
  it('a sweep succeeded only if it completed with every point done', () => {
    expect(sweepSucceeded(view(progress(pts), 'COMPLETED'))).toBe(false);
    const done = pts.map((p) => ({ ...p, status: 'done' as const }));
    expect(sweepSucceeded(view(progress(done, 'completed'), 'COMPLETED'))).toBe(true);
    expect(sweepSucceeded(view(progress(done, 'aborted'), 'COMPLETED'))).toBe(false);
    expect(sweepSucceeded(view(progress(done, 'completed'), 'FAILED'))).toBe(false);
  });
  it('bar fraction: settled 1, pending 0, running from elapsed and ETA', () => {
    const live = { concurrency: 8, etaSeconds: 95, activity: 'runPoint', attempt: 1 };
    expect(pointFraction(pts[0]!, undefined)).toBe(1);
    expect(pointFraction(pts[2]!, undefined)).toBe(0);
    expect(pointFraction(pts[1]!, live)).toBeCloseTo(0.5, 1);
    expect(pointDetail(pts[1]!, { ...live, phase: 'profiling', completed: 10, inFlight: 8 })).toBe(
      'profiling · 10 req done · 8 in flight · ETA 1m35s · attempt 2',
    );
    expect(pointLine(pts[2]!)).toMatch(/c=16\s+pending\s+attempts 0/);
  });
  it('plain mode prints a line per change, not per poll', () => {
    const lines: string[] = [];
    const r = new PlainReporter((l) => lines.push(l), 30_000);
    const v = view(progress(pts));
    r.update(v, 1_000);
    const first = lines.length;
    expect(first).toBe(5); // header, allocation, 3 points
    r.update(v, 2_000);
    expect(lines.length).toBe(first);
    r.update({ ...v, live: [{ ...v.live[0]!, completed: 200 }] }, 3_000); // same phase, < 30 s: quiet
    expect(lines.length).toBe(first);
    r.update({ ...v, live: [{ ...v.live[0]!, completed: 300 }] }, 40_000); // periodic progress
    expect(lines.length).toBe(first + 1);
    expect(lines.at(-1)).toContain('300 req done');
  });
  it("a queued allocation shows Slurm's pending reason and the wait so far (status, watch header, plain lines on a change of reason)", () => {
    const queued = {
      phase: 'allocating',
      jobName: 'infersweep-x-a2',
      jobId: '123',
      state: 'PENDING',
      reason: 'Resources',
      waitedSeconds: 725,
      activity: 'allocate',
      attempt: 1,
    };
    const p = { ...progress(pts, 'allocating'), currentPoint: undefined };
    const v = { ...view(p), live: [queued] };
    expect(allocatingLine(queued)).toBe('allocating: job 123 PENDING (Resources) for 12m05s');
    expect(statusText(v)).toContain('  queue        allocating: job 123 PENDING (Resources) for 12m05s');
    expect(sweepHeader(p, v)).toBe('balanced: 1/3 points · allocating · job 123 PENDING (Resources) for 12m05s');
    // before squeue lists the job: its name; Slurm's reason "None" is not a reason
    expect(
      allocatingLine({ ...queued, jobId: undefined, state: 'submitting', reason: undefined, waitedSeconds: 1 }),
    ).toBe('allocating: infersweep-x-a2 submitting for 1s');
    expect(allocatingLine({ ...queued, state: 'CONFIGURING', reason: 'None', waitedSeconds: 3700 })).toBe(
      'allocating: job 123 CONFIGURING for 1h01m',
    );
    // no allocate heartbeat: no queue line; a granted allocation is shown as the job it holds
    expect(statusText(view(p))).not.toContain('queue ');
    expect(
      sweepHeader(
        { ...p, allocation: { jobId: '12', nodes: ['node1'], attempt: 1, grantedAt: 't', timeLimitMinutes: 60 } },
        v,
      ),
    ).toBe('balanced: 1/3 points · allocating · job 12 on node1');
    const lines: string[] = [];
    const r = new PlainReporter((l) => lines.push(l), 30_000);
    r.update(v, 1_000);
    expect(lines[0]).toContain('job 123 PENDING (Resources) for 12m05s');
    r.update({ ...v, live: [{ ...queued, waitedSeconds: 730 }] }, 6_000); // the wait grows: quiet
    expect(lines.filter((l) => l.includes('job 123'))).toHaveLength(1);
    r.update({ ...v, live: [{ ...queued, reason: 'Priority', waitedSeconds: 735 }] }, 11_000); // the reason changes: a line
    expect(lines.at(-1)).toContain('job 123 PENDING (Priority) for 12m15s');
  });
});

describe('list query', () => {
  it('filters by search attributes and quotes values', () => {
    expect(listQuery({ running: true, orientation: "bal'x", cluster: 'local' })).toBe(
      "(WorkflowType = 'sweepWorkflow' OR WorkflowType = 'sweepAllWorkflow') AND ExecutionStatus = 'Running' AND InfersweepOrientation = 'bal\\'x' AND InfersweepCluster = 'local'",
    );
  });
});

describe('janitor verdicts', () => {
  const running = 'sweep-cfg-balanced-local-a';
  const closed = 'sweep-cfg-latency-local-b';
  const tag = deploymentTag('default', 'unit');
  const job = (name: string, jobId = '1') => ({ jobId, name, state: 'RUNNING', nodes: ['node1'] });
  it('keeps jobs of running sweeps, flags closed and unknown ones', () => {
    const v = judge(
      [
        job(allocationJobName(running, 3, tag), '1'),
        job(allocationJobName(closed, 1, tag), '2'),
        job(`infersweep-${tag}-someone-else-0000-a1`, '3'),
        job('infersweep-no-attempt', '4'),
      ],
      [
        { workflowId: running, status: 'RUNNING' },
        { workflowId: closed, status: 'COMPLETED' },
      ],
      tag,
    );
    expect(v.map((x) => x.verdict)).toEqual(['running-sweep', 'closed-sweep', 'unknown-sweep', 'unknown-sweep']);
    expect(v[0]!.sweepId).toBe(running);
  });
  it('a running execution wins over a closed one of the same id', () => {
    const v = judge(
      [job(allocationJobName(running, 1, tag))],
      [
        { workflowId: running, status: 'RUNNING' },
        { workflowId: running, status: 'FAILED' },
      ],
      tag,
    );
    expect(v[0]!.verdict).toBe('running-sweep');
  });
  it('the stem is the allocation name without its attempt number', () => {
    expect(allocationJobName(running, 12, tag).startsWith(jobNameStem(running, tag))).toBe(true);
    expect(jobNameStem(running, tag)).toMatch(/-a$/);
  });
});

describe('schedule and logs arguments', () => {
  it('schedule ids and cron checks', () => {
    expect(scheduleIdOf('nightly')).toBe('infersweep-nightly');
    expect(scheduleIdOf('infersweep-nightly')).toBe('infersweep-nightly');
    expect(() => scheduleIdOf('a b')).toThrow(/schedule name "a b"/);
    expect(checkCron(' 0 2 * * * ')).toBe('0 2 * * *');
    expect(() => checkCron('0 2 * *')).toThrow(/5 fields/);
  });
  it('--node matches a node name or a rank', () => {
    expect(matchesNode('logs/server-0/rank1-node2.log', 'node2')).toBe(true);
    expect(matchesNode('logs/server-0/rank1-node2.log', '1')).toBe(true);
    expect(matchesNode('logs/server-1/node1.log', 'node1')).toBe(true);
    expect(matchesNode('logs/server-1/node1.log', 'node2')).toBe(false);
    expect(matchesNode('logs/server-1/node1.log', undefined)).toBe(true);
  });
});
