import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LivenessJudge, LocalExecutor, livenessArgv, parseLiveness, type LivenessObservation } from '../src/index';

const jobLine = (state: string, reason = 'None') =>
  `7|${state}|${reason}|node[1-2]|1:00:00|2026-12-03T10:00:00|infersweep-x-a1`;
const out = (job: string | null, steps: string | null, pids: string[] = []) =>
  [
    job ?? '@@job 1\nslurm_load_jobs error: Socket timed out on send/recv operation',
    steps ?? '@@steps 1\nslurm_load_jobs error: Socket timed out on send/recv operation',
    ...pids,
  ].join('\n');

describe('parseLiveness (LIVENESS_SCRIPT output)', () => {
  it('a healthy answer: job row, steps, launcher states', () => {
    const o = parseLiveness(
      out(
        `@@job 0\n${jobLine('RUNNING')}`,
        '@@steps 0\n7.0|node1|infersweep-server1-r0\n7.1|node2|infersweep-server1-r1',
        ['@@pid 123 alive', '@@pid 124 dead'],
      ),
      '7',
    );
    expect(o.job).toMatchObject({ ok: true, gone: false, row: { jobId: '7', state: 'RUNNING' } });
    expect(o.steps).toEqual({
      ok: true,
      rows: [
        { stepId: '7.0', node: 'node1', name: 'infersweep-server1-r0' },
        { stepId: '7.1', node: 'node2', name: 'infersweep-server1-r1' },
      ],
    });
    expect(o.launchers).toEqual({ 123: true, 124: false });
  });

  it('a failed squeue is no answer (not an empty list); "Invalid job id" is a definite GONE', () => {
    const failed = parseLiveness(out(null, null), '7');
    expect(failed.job.ok).toBe(false);
    expect(failed.steps.ok).toBe(false);
    const gone = parseLiveness(
      out('@@job 1\nslurm_load_jobs error: Invalid job id specified', '@@steps 1\nInvalid job id specified'),
      '7',
    );
    expect(gone.job).toEqual({ ok: true, row: null, gone: true });
    expect(gone.steps).toEqual({ ok: true, rows: [] });
    // output cut short: no section at all → failed, never "no steps"
    expect(parseLiveness('', '7')).toMatchObject({ job: { ok: false }, steps: { ok: false } });
  });
});

describe('LIVENESS_SCRIPT on a site whose squeue warns on stderr', () => {
  /** Run the real script with a `squeue` on PATH that prints `stdoutJob`/`stdoutSteps`, a warning on stderr, and exits `rc`. */
  async function observe(rc: number, stderr: string): Promise<LivenessObservation> {
    const bin = mkdtempSync(join(tmpdir(), 'fake-squeue-'));
    writeFileSync(
      join(bin, 'squeue'),
      [
        '#!/bin/sh',
        `echo ${JSON.stringify(stderr)} >&2`,
        `[ ${rc} -eq 0 ] || exit ${rc}`,
        'case " $* " in *" -s "*) echo "7.0|node1|infersweep-server1-r0" ;; *) echo "7|RUNNING|None|node[1-2]|1:00:00|2026-12-03T10:00:00|infersweep-x-a1" ;; esac',
      ].join('\n'),
    );
    chmodSync(join(bin, 'squeue'), 0o755);
    const r = await new LocalExecutor().run(livenessArgv('7'), { env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });
    return parseLiveness(r.stdout, '7');
  }

  it('a warning on stderr with rc 0 does not make the poll unknown: the rows are read', async () => {
    const o = await observe(0, 'squeue: warning: slurm.conf option X is deprecated');
    expect(o.job).toMatchObject({ ok: true, gone: false, row: { jobId: '7', state: 'RUNNING' } });
    expect(o.steps).toEqual({ ok: true, rows: [{ stepId: '7.0', node: 'node1', name: 'infersweep-server1-r0' }] });
  });

  it('a failed squeue still reports its stderr; "Invalid job id" on stderr is still a definite GONE', async () => {
    expect((await observe(1, 'slurm_load_jobs error: Socket timed out on send/recv operation')).job).toEqual({
      ok: false,
      error: 'slurm_load_jobs error: Socket timed out on send/recv operation',
    });
    expect((await observe(1, 'slurm_load_jobs error: Invalid job id specified')).job).toEqual({
      ok: true,
      row: null,
      gone: true,
    });
  });
});

describe('LivenessJudge: a loss needs evidence', () => {
  const steps = [
    { stepName: 'infersweep-server1-r0', node: 'node1', launcherPid: 123 },
    { stepName: 'infersweep-server1-r1', node: 'node2' },
  ];
  const healthy: LivenessObservation = parseLiveness(
    out(
      `@@job 0\n${jobLine('RUNNING')}`,
      '@@steps 0\n7.0|node1|infersweep-server1-r0\n7.1|node2|infersweep-server1-r1',
    ),
    '7',
  );
  const noAnswer = parseLiveness(out(null, null), '7');
  const stepGone = parseLiveness(
    out(`@@job 0\n${jobLine('RUNNING')}`, '@@steps 0\n7.0|node1|infersweep-server1-r0', ['@@pid 123 dead']),
    '7',
  );

  it('failed polls are unknown however many there are, and never a loss', () => {
    const j = new LivenessJudge(steps);
    for (let i = 1; i <= 20; i++) expect(j.observe(noAnswer)).toMatchObject({ kind: 'unknown', streak: i });
    expect(j.observe(healthy)).toMatchObject({ kind: 'alive', suspect: null });
  });

  it('one flaky squeue in three during a point: never a loss', () => {
    const j = new LivenessJudge(steps);
    for (let i = 0; i < 30; i++) expect(j.observe(i % 3 === 2 ? noAnswer : healthy).kind).not.toMatch(/lost/);
  });

  it("Slurm's terminal state is a loss at once, with its state and reason", () => {
    const j = new LivenessJudge(steps);
    expect(j.observe(parseLiveness(out(`@@job 0\n${jobLine('NODE_FAIL', 'NodeDown')}`, '@@steps 0'), '7'))).toEqual({
      kind: 'allocation-lost',
      state: 'NODE_FAIL',
      reason: 'NodeDown',
    });
    expect(
      new LivenessJudge(steps).observe(parseLiveness(out(`@@job 0\n${jobLine('CANCELLED')}`, '@@steps 0'), '7')),
    ).toMatchObject({
      kind: 'allocation-lost',
      state: 'CANCELLED',
    });
  });

  it('a job slurmctld no longer knows is GONE only on the second consecutive observation', () => {
    const gone = parseLiveness(out('@@job 1\nInvalid job id specified', '@@steps 1\nInvalid job id specified'), '7');
    const j = new LivenessJudge(steps);
    expect(j.observe(gone).kind).toBe('unknown');
    expect(j.observe(healthy).kind).toBe('alive'); // streak broken
    expect(j.observe(gone).kind).toBe('unknown');
    expect(j.observe(gone)).toMatchObject({ kind: 'allocation-lost', state: 'GONE' });
  });

  it('a missing step is lost after 3 consecutive observations; a step query that failed does not count; a live launcher covers a step not yet listed', () => {
    const j = new LivenessJudge(steps);
    expect(j.observe(stepGone)).toMatchObject({ kind: 'alive', suspect: expect.stringMatching(/server1-r1.*1\/3/) });
    const stepsUnknown = parseLiveness(out(`@@job 0\n${jobLine('RUNNING')}`, null), '7');
    expect(j.observe(stepsUnknown)).toMatchObject({ kind: 'alive', suspect: expect.stringMatching(/steps unknown/) });
    expect(j.observe(stepGone).kind).toBe('alive');
    expect(j.observe(stepGone)).toMatchObject({
      kind: 'step-lost',
      step: { stepName: 'infersweep-server1-r1' },
      observations: 3,
    });
    const starting = parseLiveness(
      out(`@@job 0\n${jobLine('RUNNING')}`, '@@steps 0\n7.1|node2|infersweep-server1-r1', ['@@pid 123 alive']),
      '7',
    );
    const k = new LivenessJudge(steps);
    for (let i = 0; i < 5; i++) expect(k.observe(starting).kind).toBe('alive');
  });
});
