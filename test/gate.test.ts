/**
 * The test gate of scripts/test.sh (what `npm test` and .ci/run decide from the lanes' vitest JSON
 * reports): a run passes only with every report present, no failed, skipped or todo test, a zero
 * vitest exit, and at least the floor of tests and files per project.
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './stack-env';

type Status = 'passed' | 'failed' | 'skipped' | 'todo';
const dir = mkdtempSync(join(tmpdir(), 'infersweep-gate-'));
const floors = JSON.stringify({ unit: { tests: 2, files: 1 }, integration: { tests: 1, files: 1 } });

/** A vitest JSON report of files (path → the status of each test; a file with no test failed to load). */
function report(name: string, files: Record<string, Status[]>, fileFailed: string[] = []): string {
  const tests = Object.values(files).flat();
  const count = (s: Status) => tests.filter((t) => t === s).length;
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      numPassedTests: count('passed'),
      numFailedTests: count('failed'),
      numPendingTests: count('skipped'),
      numTodoTests: count('todo'),
      testResults: Object.entries(files).map(([path, ts]) => ({
        name: join(repoRoot, path),
        status: ts.includes('failed') || fileFailed.includes(path) ? 'failed' : 'passed',
        startTime: 0,
        endTime: 1000,
        message: fileFailed.includes(path) ? `Error: cannot import ${path}` : undefined,
        assertionResults: ts.map((status, i) => ({
          status,
          fullName: `${path} test ${i}`,
          failureMessages:
            status === 'failed' ? [`AssertionError: expected ${i} to be 42\n    at ${path}:${i + 1}:7`] : [],
        })),
      })),
    }),
  );
  return file;
}

function gate(...reports: string[]): Promise<{ code: number; out: string; last: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      [join(repoRoot, 'scripts/test.sh'), '--gate', 'unit,integration', ...reports],
      { env: { ...process.env, TEST_FLOORS: floors, GATE_OUT: dir } },
      (err, stdout) => {
        const lines = stdout.trim().split('\n');
        resolve({ code: err ? Number(err.code) : 0, out: stdout, last: lines[lines.length - 1]! });
      },
    );
  });
}

const unit = (statuses: Status[] = ['passed', 'passed']) => report('unit', { 'libs/x/test/a.test.ts': statuses });
const integration = () => report('integration', { 'libs/x/test/b.int.test.ts': ['passed'] });

describe('scripts/test.sh gate', () => {
  it('passes a clean run at its floors and ends with the summary line', async () => {
    const r = await gate(`${unit()}=0`, `${integration()}=0`);
    expect([r.code, r.last]).toEqual([0, '3 passed, 0 failed']);
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))).toMatchObject({
      passed: 3,
      failed: 0,
      problems: [],
    });
  });

  it('fails on a skipped or todo test, naming it', async () => {
    const skipped = await gate(`${unit(['passed', 'passed', 'skipped'])}=0`, `${integration()}=0`);
    expect(skipped.code).toBe(1);
    expect(skipped.out).toContain('skipped: libs/x/test/a.test.ts > libs/x/test/a.test.ts test 2');
    const todo = await gate(`${unit(['passed', 'passed', 'todo'])}=0`, `${integration()}=0`);
    expect(todo.code).toBe(1);
    expect(todo.out).toContain('1 todo tests (none may be)');
  });

  it('fails when a lane report is missing or its vitest exited non-zero', async () => {
    const missing = await gate(`${unit()}=0`, `${join(dir, 'lane-b.json')}=0`);
    expect([missing.code, missing.last]).toEqual([1, '2 passed, 1 failed']);
    expect(missing.out).toMatch(/lane-b\.json: no report \(ENOENT\)/);
    const red = await gate(`${unit()}=0`, `${integration()}=1`);
    expect(red.code).toBe(1);
    expect(red.out).toContain('integration.json: vitest exited 1');
  });

  it('fails below the floor of tests or files of a project, or when a project ran nothing', async () => {
    const few = await gate(`${unit(['passed'])}=0`, `${integration()}=0`);
    expect(few.code).toBe(1);
    expect(few.out).toContain('unit: 1 tests in 1 files ran, the floor is 2 tests in 1 files');
    const none = await gate(`${unit()}=0`);
    expect(none.code).toBe(1);
    expect(none.out).toContain('integration: no test ran');
  });

  it('counts a file that failed without a failed test (an import error) as a failure', async () => {
    const broken = report('broken', { 'libs/x/test/b.int.test.ts': ['passed'], 'libs/x/test/c.int.test.ts': [] }, [
      'libs/x/test/c.int.test.ts',
    ]);
    const r = await gate(`${unit()}=0`, `${broken}=0`);
    expect([r.code, r.last]).toEqual([1, '3 passed, 1 failed']);
    expect(r.out).toContain(
      '[gate] FAILED libs/x/test/c.int.test.ts\n[gate]   Error: cannot import libs/x/test/c.int.test.ts',
    );
  });

  it('prints each file’s wall time from the durations file beside its report (hooks included), else its tests’ span', async () => {
    const withHooks = report('hooks', { 'libs/x/test/v.int.test.ts': ['passed'] });
    writeFileSync(
      join(dir, 'hooks.durations.json'),
      JSON.stringify({ [join(repoRoot, 'libs/x/test/v.int.test.ts')]: 71.25 }),
    );
    const r = await gate(`${unit()}=0`, `${withHooks}=0`);
    expect(r.code).toBe(0);
    expect(r.out).toContain('[gate]    71.3    1 passed libs/x/test/v.int.test.ts');
    expect(r.out).toContain('[gate]     1.0    2 passed libs/x/test/a.test.ts'); // no unit.durations.json: 0 to 1000 ms
  });

  it('prints each failed test with the head of its message near the end (a CI log keeps its tail)', async () => {
    const r = await gate(`${unit(['passed', 'failed', 'passed'])}=0`, `${integration()}=0`);
    expect([r.code, r.last]).toEqual([1, '3 passed, 1 failed']);
    const tail = r.out.trim().split('\n').slice(-4);
    expect(tail).toEqual([
      '[gate] FAILED libs/x/test/a.test.ts > libs/x/test/a.test.ts test 1',
      '[gate]   AssertionError: expected 1 to be 42',
      '[gate]       at libs/x/test/a.test.ts:2:7',
      '3 passed, 1 failed',
    ]);
  });
});
