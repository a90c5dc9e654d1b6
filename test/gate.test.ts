/**
 * The runner and gate of `npm test` (test/gate.ts): a run passes only with every lane's report present, no
 * failed, skipped or todo test, a zero vitest exit, and at least the floor of tests and files per project;
 * the lanes of test/lanes.ts never overlap and every file runs in exactly one lane.
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  errorExcerpt,
  green,
  integrationFiles,
  judge,
  planLanes,
  projectsAlone,
  readLane,
  type LaneResult,
  type VitestReport,
} from './gate';
import { LANE_A, LANE_C, LANE_D, QUIET } from './lanes';
import { repoRoot } from '@infersweep/testkit/stack';

type Status = 'passed' | 'failed' | 'skipped' | 'todo';
const root = '/repo';
const floors = { unit: { tests: 2, files: 1 }, integration: { tests: 1, files: 1 } };
const opts = { root, floors, projects: ['unit' as const, 'integration' as const] };

/** A lane with a vitest JSON report of files (path → the status of each test; `fileFailed`: failed to load). */
function lane(
  name: string,
  files: Record<string, Status[]>,
  more: { fileFailed?: string[]; rc?: number; durations?: Record<string, number> } = {},
): LaneResult {
  const tests = Object.values(files).flat();
  const count = (s: Status) => tests.filter((t) => t === s).length;
  const failedToLoad = more.fileFailed ?? [];
  const report: VitestReport = {
    numPassedTests: count('passed'),
    numFailedTests: count('failed'),
    numPendingTests: count('skipped'),
    numTodoTests: count('todo'),
    testResults: Object.entries(files).map(([path, ts]) => ({
      name: join(root, path),
      status: ts.includes('failed') || failedToLoad.includes(path) ? 'failed' : 'passed',
      startTime: 0,
      endTime: 1000,
      message: failedToLoad.includes(path) ? `Error: cannot import ${path}` : undefined,
      assertionResults: ts.map((status, i) => ({
        status,
        fullName: `${path} test ${i}`,
        failureMessages:
          status === 'failed' ? [`AssertionError: expected ${i} to be 42\n    at ${path}:${i + 1}:7`] : [],
      })),
    })),
  };
  return { name, rc: more.rc ?? 0, report, durations: more.durations ?? {} };
}

const unit = (statuses: Status[] = ['passed', 'passed']) => lane('unit', { 'libs/x/test/a.test.ts': statuses });
const integration = (rc = 0) => lane('lane-a', { 'libs/x/test/b.int.test.ts': ['passed'] }, { rc });
const last = (lines: string[]) => lines[lines.length - 1];

describe('the gate', () => {
  it('passes a clean run at its floors and ends with the summary line', () => {
    const { summary, lines } = judge([unit(), integration()], opts);
    expect([green(summary), last(lines)]).toEqual([true, '3 passed, 0 failed']);
    expect(summary).toMatchObject({ passed: 3, failed: 0, problems: [] });
    expect(summary.per).toEqual({ unit: { tests: 2, files: 1 }, integration: { tests: 1, files: 1 } });
  });

  it('fails on a skipped or todo test, naming it', () => {
    const skipped = judge([unit(['passed', 'passed', 'skipped']), integration()], opts);
    expect(green(skipped.summary)).toBe(false);
    expect(skipped.lines).toContain('[gate] FAIL skipped: libs/x/test/a.test.ts > libs/x/test/a.test.ts test 2');
    const todo = judge([unit(['passed', 'passed', 'todo']), integration()], opts);
    expect(green(todo.summary)).toBe(false);
    expect(todo.lines).toContain('[gate] FAIL unit: 0 skipped and 1 todo tests (none may be)');
  });

  it('fails when a lane report is missing or its vitest exited non-zero', () => {
    const gone: LaneResult = { name: 'lane-b', rc: 'missing', report: { missing: 'ENOENT' }, durations: {} };
    const missing = judge([unit(), integration(), gone], opts);
    expect([green(missing.summary), last(missing.lines)]).toEqual([false, '3 passed, 1 failed']);
    expect(missing.summary.problems).toEqual(['lane-b: vitest exited missing', 'lane-b: no report (ENOENT)']);
    const red = judge([unit(), integration(1)], opts);
    expect([green(red.summary), last(red.lines)]).toEqual([false, '3 passed, 1 failed']);
    expect(red.lines).toContain('[gate] FAIL lane-a: vitest exited 1');
  });

  it('fails below the floor of tests or files of a project, or when a project ran nothing', () => {
    const few = judge([unit(['passed']), integration()], opts);
    expect(green(few.summary)).toBe(false);
    expect(few.lines).toContain('[gate] FAIL unit: 1 tests in 1 files ran, the floor is 2 tests in 1 files');
    const fewFiles = judge([unit(), integration()], {
      ...opts,
      floors: { ...floors, integration: { tests: 1, files: 2 } },
    });
    expect(fewFiles.summary.problems).toEqual(['integration: 1 tests in 1 files ran, the floor is 1 tests in 2 files']);
    const none = judge([unit()], opts);
    expect([green(none.summary), last(none.lines)]).toEqual([false, '2 passed, 1 failed']);
    expect(none.lines).toContain('[gate] FAIL integration: no test ran');
  });

  it('counts a file that failed without a failed test (an import error) as a failure', () => {
    const broken = lane(
      'lane-a',
      { 'libs/x/test/b.int.test.ts': ['passed'], 'libs/x/test/c.int.test.ts': [] },
      { fileFailed: ['libs/x/test/c.int.test.ts'] },
    );
    const { summary, lines } = judge([unit(), broken], opts);
    expect([green(summary), last(lines)]).toEqual([false, '3 passed, 1 failed']);
    expect(lines.slice(-3)).toEqual([
      '[gate] FAILED libs/x/test/c.int.test.ts',
      '[gate]   Error: cannot import libs/x/test/c.int.test.ts',
      '3 passed, 1 failed',
    ]);
  });

  it('points at the lane’s log when a failed file has no message in the report (a hook that timed out)', () => {
    const hook = lane(
      'unit',
      { 'libs/x/test/a.test.ts': ['passed', 'passed'], 'libs/x/test/h.test.ts': [] },
      {
        fileFailed: ['libs/x/test/h.test.ts'],
      },
    );
    const r = hook.report as VitestReport;
    hook.report = { ...r, testResults: r.testResults.map((t) => ({ ...t, message: '' })) };
    const { lines } = judge([hook, integration()], opts);
    expect(lines.slice(-3)).toEqual([
      '[gate] FAILED libs/x/test/h.test.ts',
      '[gate]   (no message in the report: see unit.log)',
      '3 passed, 1 failed',
    ]);
  });

  it('prints the error of a failed file’s hook, which the JSON report drops (from the reporter’s errors file)', () => {
    const hook = lane(
      'unit',
      { 'libs/x/test/a.test.ts': ['passed', 'passed'], 'libs/x/test/h.test.ts': [] },
      { fileFailed: ['libs/x/test/h.test.ts'] },
    );
    const r = hook.report as VitestReport;
    hook.report = { ...r, testResults: r.testResults.map((t) => ({ ...t, message: '' })) };
    hook.fileErrors = {
      [join(root, 'libs/x/test/h.test.ts')]: ['suite: Error: the stack is down\n    at h.test.ts:4:11'],
    };
    const { lines } = judge([hook, integration()], opts);
    expect(lines.slice(-4)).toEqual([
      '[gate] FAILED libs/x/test/h.test.ts',
      '[gate]   suite: Error: the stack is down',
      '[gate]       at h.test.ts:4:11',
      '3 passed, 1 failed',
    ]);
  });

  it('surfaces a real failing beforeAll: vitest with the gate’s reporters, read back like a lane', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-gate-'));
    writeFileSync(
      join(dir, 'hook.test.ts'),
      [
        "describe('a suite', () => {",
        "  beforeAll(() => { throw new Error('the stack is down: no Temporal at 127.0.0.1:7233'); });",
        "  it('never runs', () => expect(1).toBe(1));",
        '});',
      ].join('\n'),
    );
    const rc = await new Promise<number>((resolve) =>
      execFile(
        join(repoRoot, 'node_modules', '.bin', 'vitest'),
        ['run', '--root', dir, '--globals', '--reporter=json', `--outputFile.json=${join(dir, 'unit.json')}`].concat(
          `--reporter=${join(repoRoot, 'test', 'file-durations-reporter.ts')}`,
        ),
        {
          cwd: dir,
          env: {
            ...process.env,
            INFERSWEEP_FILE_DURATIONS: join(dir, 'unit.durations.json'),
            INFERSWEEP_FILE_ERRORS: join(dir, 'unit.errors.json'),
          },
        },
        (err) => resolve(err ? Number(err.code ?? 1) : 0),
      ),
    );
    const read = readLane('unit', dir, rc);
    // the JSON report itself carries no message for the file: the errors file does
    const report = read.report as VitestReport;
    expect(report.testResults.map((t) => [t.status, t.message])).toEqual([['failed', '']]);
    const { lines } = judge([read], { root: dir, floors: {}, projects: ['unit'] });
    expect(lines).toContain('[gate] FAILED hook.test.ts');
    expect(lines).toContain('[gate]   a suite: Error: the stack is down: no Temporal at 127.0.0.1:7233');
    expect(rc).toBe(1);
  }, 120_000);

  it('prints each file’s wall time from the durations file (hooks included), else its tests’ span, slowest first', () => {
    const withHooks = lane(
      'lane-a',
      { 'libs/x/test/v.int.test.ts': ['passed'] },
      { durations: { [join(root, 'libs/x/test/v.int.test.ts')]: 71.25 } },
    );
    const { lines } = judge([unit(), withHooks], opts);
    const table = lines.filter((l) => /^\[gate\] +\d/.test(l));
    expect(table).toEqual([
      '[gate]    71.3    1 passed libs/x/test/v.int.test.ts',
      '[gate]     1.0    2 passed libs/x/test/a.test.ts', // no durations: its tests' span, 0 to 1000 ms
    ]);
    expect(lines).toContain('[gate] per project: unit 2 tests in 1 files; integration 1 tests in 1 files');
  });

  it('prints each failed test with the head of its message near the end (a CI log keeps its tail)', () => {
    const { summary, lines } = judge([unit(['passed', 'failed', 'passed']), integration()], opts);
    expect(summary).toMatchObject({ passed: 3, failed: 1 });
    expect(lines.slice(-4)).toEqual([
      '[gate] FAILED libs/x/test/a.test.ts > libs/x/test/a.test.ts test 1',
      '[gate]   AssertionError: expected 1 to be 42',
      '[gate]       at libs/x/test/a.test.ts:2:7',
      '3 passed, 1 failed',
    ]);
  });

  it('quotes a red lane’s log around the lines that say why', () => {
    const log = ['ok', 'Error: Worker exited unexpectedly', ...Array.from({ length: 20 }, (_, i) => `at ${i}`)];
    expect(errorExcerpt(log.join('\n'))).toEqual(log.slice(1, 14));
  });

  it('quotes vitest’s closing failure sections of a red lane’s log when there are any, not the noise before', () => {
    const failed = '\x1b[31m⎯⎯⎯ Failed Suites 1 ⎯⎯⎯\x1b[39m';
    const log = [
      'error: logged by a passing test',
      'at x',
      failed,
      ' FAIL  a.test.ts > rules',
      'Error: Hook timed out',
    ];
    expect(errorExcerpt(log.join('\n'))).toEqual([
      '⎯⎯⎯ Failed Suites 1 ⎯⎯⎯',
      ' FAIL  a.test.ts > rules',
      'Error: Hook timed out',
    ]);
  });
});

describe('the lanes', () => {
  const files = [...LANE_A, ...QUIET, ...LANE_C, ...LANE_D, 'libs/x/test/new.int.test.ts'].sort();
  const filesOf = (args: string[]) => args.filter((a) => a.endsWith('.int.test.ts'));

  it('runs every integration file in exactly one lane, a new file in lane B before the production project', () => {
    for (const n of ['1', '2', '3', '4']) {
      const lanes = planLanes({ INFERSWEEP_TEST_LANES: n }, root, files);
      const ran = lanes.flatMap((l) => filesOf(l.args));
      expect([n, ran.sort()]).toEqual([n, files]);
      expect(lanes.map((l) => l.name)).toEqual(
        n === '1'
          ? ['unit', 'lane-a']
          : ['unit', 'lane-a', 'lane-q', 'lane-b', 'lane-c', 'lane-d'].slice(0, Number(n) + 2),
      );
      // the quiet lane alone after the others, on lane A's stack
      expect(lanes.filter((l) => l.after).map((l) => [l.name, filesOf(l.args), l.slot])).toEqual(
        n === '1' ? [] : [['lane-q', QUIET, '0']],
      );
    }
    const [unitLane, a, , b, c, d] = planLanes({}, root, files);
    expect(unitLane).toEqual({
      name: 'unit',
      slot: '0',
      data: '/repo/.infersweep',
      args: ['--project', 'unit'],
      nice: 10,
    });
    expect(filesOf(a!.args)).toEqual(LANE_A);
    expect(filesOf(c!.args)).toEqual(LANE_C);
    expect(filesOf(d!.args)).toEqual(LANE_D);
    expect([d!.slot, d!.data]).toEqual(['7', '/repo/.infersweep-7']);
    expect([b!.slot, b!.data, b!.args.slice(-2)]).toEqual([
      '9',
      '/repo/.infersweep-9',
      ['libs/x/test/new.int.test.ts', 'test/production/'],
    ]);
    expect([c!.slot, c!.data]).toEqual(['8', '/repo/.infersweep-8']);
  });

  it('lists only files of this repository, each in one lane', () => {
    const real = integrationFiles(repoRoot);
    expect(real).toEqual(expect.arrayContaining([...LANE_A, ...QUIET, ...LANE_C, ...LANE_D]));
    const lanes = planLanes({}, repoRoot, real);
    expect(lanes.flatMap((l) => filesOf(l.args)).sort()).toEqual(real);
  });

  it('lists no file in two lanes', () => {
    expect(new Set([...LANE_A, ...QUIET, ...LANE_C, ...LANE_D]).size).toBe(
      LANE_A.length + QUIET.length + LANE_C.length + LANE_D.length,
    );
  });

  it('refuses two lanes on one stack slot, a listed file that does not exist, and an unknown lane count', () => {
    expect(() => planLanes({ INFERSWEEP_LANE_C_SLOT: '9' }, root, files)).toThrow(
      'lane C needs its own stack slot: INFERSWEEP_LANE_C_SLOT (9) is another lane',
    );
    expect(() => planLanes({ INFERSWEEP_TEST_LANES: '2', INFERSWEEP_STACK_SLOT: '9' }, root, files)).toThrow(
      'lane B needs its own stack slot',
    );
    expect(() => planLanes({}, root, files.slice(1))).toThrow(`a lane lists ${files[0]}, which does not exist`);
    expect(() => planLanes({ INFERSWEEP_LANE_D_SLOT: '8' }, root, files)).toThrow(
      'lane D needs its own stack slot: INFERSWEEP_LANE_D_SLOT (8) is another lane',
    );
    expect(() => planLanes({ INFERSWEEP_TEST_LANES: '5' }, root, files)).toThrow('INFERSWEEP_TEST_LANES is 5');
  });

  it('gates `--project P…` alone and passes any other arguments to vitest', () => {
    expect(projectsAlone(['--project', 'unit'])).toEqual(['unit']);
    expect(projectsAlone(['--project', 'integration', '--project', 'production'])).toEqual([
      'integration',
      'production',
    ]);
    expect(projectsAlone(['--project', 'unit', 'libs/core/test/a.test.ts'])).toBeUndefined();
    expect(projectsAlone(['--project', 'nightly'])).toBeUndefined();
    expect(projectsAlone([])).toBeUndefined();
  });
});
