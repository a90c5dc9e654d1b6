/**
 * The runner and the gate of `npm test` (scripts/test.sh calls it; .ci/run reads what it writes):
 * - no arguments: the unit project (niced) beside the integration lanes of test/lanes.ts, each on its own stack;
 * - `--project P…` alone: those projects in one lane on INFERSWEEP_STACK_SLOT;
 * - `--nightly [vitest args]`: the nightly project;
 * - any other arguments: plain `vitest run` with them, ungated;
 * then the gate over every lane's vitest JSON report: a missing report, a non-zero vitest exit, a failed,
 * skipped or todo test, a file that failed without a failed test, or a project below its floor fails the run.
 * It prints each file's wall time (slowest first), each failed test with the head of its message, and last
 * `N passed, N failed`; it writes test-results/summary.json and test-results/phases.txt (`name seconds rc` a line).
 */
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { FLOORS, LANE_A, LANE_C, LANE_D, QUIET, SLOTS, UNIT_NICE, type Project } from './lanes';

type Floors = Partial<Record<Project, { tests: number; files: number }>>;

/** The parts of vitest's JSON report the gate reads. */
export interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: {
    name: string;
    status: string;
    startTime: number;
    endTime: number;
    message?: string;
    assertionResults: { status: string; fullName: string; failureMessages?: string[] }[];
  }[];
}

/**
 * One lane's outcome: its report (or why there is none), its per-file seconds, the errors of each
 * file's hooks and suites (test/file-durations-reporter.ts; the JSON report drops them) and vitest's exit code.
 */
export interface LaneResult {
  name: string;
  rc: number | 'missing';
  report: VitestReport | { missing: string };
  durations: Record<string, number>;
  fileErrors?: Record<string, string[]>;
}

export interface Summary {
  passed: number;
  failed: number;
  problems: string[];
  per: Partial<Record<Project, { tests: number; files: number }>>;
  files: { name: string; s: number; status: string; tests: number }[];
}

export const projectOf = (file: string): Project =>
  file.endsWith('.nightly.test.ts')
    ? 'nightly'
    : file.endsWith('.prod.test.ts')
      ? 'production'
      : file.endsWith('.int.test.ts')
        ? 'integration'
        : 'unit';

const UNRUN = ['skipped', 'pending', 'todo', 'disabled'];

/** Judge the lanes: the summary, and the lines to print (the summary line last). */
export function judge(
  lanes: LaneResult[],
  opts: { root: string; floors: Floors; projects: Project[] },
): { summary: Summary; lines: string[] } {
  const problems: string[] = [];
  const per: Summary['per'] = {};
  const files: Summary['files'] = [];
  const failures: { what: string; why: string }[] = []; // printed last: a CI log keeps its tail
  let passed = 0;
  let failed = 0;
  for (const lane of lanes) {
    if (lane.rc !== 0) problems.push(`${lane.name}: vitest exited ${lane.rc}`);
    const r = lane.report;
    if ('missing' in r) {
      problems.push(`${lane.name}: no report (${r.missing})`);
      failed += 1;
      continue;
    }
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    if (r.numPendingTests + r.numTodoTests > 0)
      problems.push(`${lane.name}: ${r.numPendingTests} skipped and ${r.numTodoTests} todo tests (none may be)`);
    for (const t of r.testResults) {
      const name = relative(opts.root, t.name);
      const p = (per[projectOf(name)] ??= { tests: 0, files: 0 });
      p.tests += t.assertionResults.filter((a) => a.status === 'passed' || a.status === 'failed').length;
      p.files += 1;
      const s = lane.durations[t.name] ?? (t.endTime - t.startTime) / 1000;
      files.push({ name, s, status: t.status, tests: t.assertionResults.length });
      for (const a of t.assertionResults) {
        if (UNRUN.includes(a.status)) problems.push(`skipped: ${name} > ${a.fullName}`);
        if (a.status === 'failed')
          failures.push({ what: `${name} > ${a.fullName}`, why: (a.failureMessages ?? []).join('\n') });
      }
      // a file that failed without a failed test (an import error, a failing hook) is a failure of its own
      if (t.status === 'failed' && !t.assertionResults.some((a) => a.status === 'failed')) {
        failed += 1;
        const why = t.message || lane.fileErrors?.[t.name]?.join('\n');
        failures.push({ what: name, why: why || `(no message in the report: see ${lane.name}.log)` });
      }
    }
  }
  for (const [project, got] of Object.entries(per)) {
    const f = opts.floors[project as Project];
    if (f && (got.tests < f.tests || got.files < f.files))
      problems.push(
        `${project}: ${got.tests} tests in ${got.files} files ran, the floor is ${f.tests} tests in ${f.files} files`,
      );
  }
  for (const project of opts.projects) if (!per[project]) problems.push(`${project}: no test ran`);
  files.sort((a, b) => b.s - a.s);
  const lines = ['', '[gate] per file (s, tests, status), slowest first:'];
  for (const f of files)
    lines.push(`[gate] ${f.s.toFixed(1).padStart(7)} ${String(f.tests).padStart(4)} ${f.status.padEnd(6)} ${f.name}`);
  const perLine = Object.entries(per).map(([p, g]) => `${p} ${g.tests} tests in ${g.files} files`);
  lines.push(`[gate] per project: ${perLine.join('; ')}`);
  for (const f of failures) {
    lines.push(`[gate] FAILED ${f.what}`);
    for (const l of f.why.split('\n').slice(0, 24)) lines.push(`[gate]   ${l.slice(0, 240)}`);
  }
  for (const p of problems) lines.push(`[gate] FAIL ${p}`);
  if (problems.length > 0 && failed === 0) failed = problems.length;
  lines.push(`${passed} passed, ${failed} failed`);
  return { summary: { passed, failed, problems, per, files }, lines };
}

/** The run passes with tests passed, none failed and no problem. */
export const green = (s: Summary): boolean => s.failed === 0 && s.problems.length === 0 && s.passed > 0;

/**
 * The lines of a red lane's log that say why: vitest's own closing sections (Failed Suites, Failed Tests,
 * Unhandled Errors) when it printed them, else each line naming an error and the 12 after it.
 */
export function errorExcerpt(log: string, max = 80): string[] {
  const lines = log.split('\n').map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
  const sections = lines.findIndex((l) => /Failed (Suites|Tests) \d|Unhandled Errors? \d?/.test(l));
  if (sections >= 0) return lines.slice(sections, sections + max);
  const keep = new Set<number>();
  lines.forEach((l, i) => {
    if (/unhandled|worker exited|timed out|error:|FAIL /i.test(l))
      for (let j = i; j <= Math.min(i + 12, lines.length - 1); j++) keep.add(j);
  });
  return [...keep].slice(0, max).map((i) => lines[i]!);
}

/** A lane: a vitest run on one stack, its report in `<out>/<name>.json`. */
export interface Lane {
  name: string;
  slot: string;
  data: string;
  args: string[];
  nice?: number;
  /** the lane's files in the order they run (test/lane-sequencer.ts) */
  order?: readonly string[];
  /** starts once every other lane has ended (the quiet lane, test/lanes.ts QUIET) */
  after?: boolean;
}

/**
 * The lanes of a full run (INFERSWEEP_TEST_LANES 1, 2, 3 or 4) from the environment and the integration files
 * on disk; throws on two lanes on one slot or a listed file that does not exist. With fewer lanes, lane D's and
 * then lane C's files run in lane B.
 */
export function planLanes(env: NodeJS.ProcessEnv, root: string, intFiles: string[]): Lane[] {
  const stack = (k: keyof typeof SLOTS) => {
    const slot = env[SLOTS[k].slot] ?? SLOTS[k].defaultSlot;
    const data = env[SLOTS[k].data] ?? join(root, k === 'a' ? '.infersweep' : `.infersweep-${slot}`);
    return { slot, data };
  };
  const [a, b, c, d] = [stack('a'), stack('b'), stack('c'), stack('d')];
  const n = Number(env.INFERSWEEP_TEST_LANES ?? '4');
  if (![1, 2, 3, 4].includes(n))
    throw new Error(`INFERSWEEP_TEST_LANES is ${env.INFERSWEEP_TEST_LANES}: use 1, 2, 3 or 4`);
  if (n === 4 && [a.slot, b.slot, c.slot].includes(d.slot))
    throw new Error(`lane D needs its own stack slot: ${SLOTS.d.slot} (${d.slot}) is another lane's`);
  if (n >= 3 && (c.slot === a.slot || c.slot === b.slot))
    throw new Error(`lane C needs its own stack slot: ${SLOTS.c.slot} (${c.slot}) is another lane's`);
  if (n !== 1 && a.slot === b.slot)
    throw new Error(`lane B needs its own stack slot: ${SLOTS.b.slot} (${b.slot}) is lane A's`);
  for (const f of [...LANE_A, ...QUIET, ...LANE_C, ...LANE_D])
    if (!intFiles.includes(f)) throw new Error(`a lane lists ${f}, which does not exist: edit test/lanes.ts`);
  const notB = new Set([...LANE_A, ...QUIET, ...(n >= 3 ? LANE_C : []), ...(n === 4 ? LANE_D : [])]);
  const laneB = intFiles.filter((f) => !notB.has(f));
  const nice = Number(env.INFERSWEEP_UNIT_NICE ?? UNIT_NICE);
  const unit: Lane = { name: 'unit', ...a, args: ['--project', 'unit'], nice };
  const integration = ['--project', 'integration'];
  const both = [...integration, '--project', 'production'];
  if (n === 1)
    return [unit, { name: 'lane-a', ...a, args: [...both, ...LANE_A, ...laneB, ...QUIET, 'test/production/'] }];
  return [
    unit,
    { name: 'lane-a', ...a, args: [...integration, ...LANE_A], order: LANE_A },
    { name: 'lane-q', ...a, args: [...integration, ...QUIET], order: QUIET, after: true },
    { name: 'lane-b', ...b, args: [...both, ...laneB, 'test/production/'] },
    ...(n >= 3 ? [{ name: 'lane-c', ...c, args: [...integration, ...LANE_C], order: LANE_C }] : []),
    ...(n === 4 ? [{ name: 'lane-d', ...d, args: [...integration, ...LANE_D], order: LANE_D }] : []),
  ];
}

/** Every `*.int.test.ts` under libs, apps and test, relative to the root, sorted. */
export function integrationFiles(root: string): string[] {
  return ['libs', 'apps', 'test']
    .flatMap((d) => readdirSync(join(root, d), { recursive: true, encoding: 'utf8' }).map((f) => join(d, f)))
    .filter((f) => f.endsWith('.int.test.ts') && !f.split('/').includes('node_modules'))
    .sort();
}

/** A lane's outcome from the files its vitest wrote into `out` (`<name>.json`, `.durations.json`, `.errors.json`). */
export function readLane(name: string, out: string, rc: number | 'missing'): LaneResult {
  const file = join(out, `${name}.json`);
  let report: LaneResult['report'];
  try {
    report = JSON.parse(readFileSync(file, 'utf8')) as VitestReport;
  } catch (e) {
    report = { missing: (e as NodeJS.ErrnoException).code ?? String(e) };
  }
  let durations: Record<string, number> = {};
  try {
    // each file's wall time with its hooks (test/file-durations-reporter.ts), else the span of its tests
    durations = JSON.parse(readFileSync(join(out, `${name}.durations.json`), 'utf8')) as Record<string, number>;
  } catch {
    // no durations file: the gate falls back on the report's spans
  }
  let fileErrors: Record<string, string[]> = {};
  try {
    fileErrors = JSON.parse(readFileSync(join(out, `${name}.errors.json`), 'utf8')) as Record<string, string[]>;
  } catch {
    // no errors file: a failed file without a failed test points at its log
  }
  return { name, rc, report, durations, fileErrors };
}

/** Run one lane's vitest with its output prefixed by its name and kept in `<out>/<name>.log`. */
async function runLane(lane: Lane, out: string, prefix: boolean): Promise<{ rc: number; seconds: number }> {
  const t0 = Date.now();
  const report = join(out, `${lane.name}.json`);
  const durations = join(out, `${lane.name}.durations.json`);
  const errors = join(out, `${lane.name}.errors.json`);
  for (const f of [report, durations, errors]) rmSync(f, { force: true });
  const vitest = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`];
  const argv = [...vitest, '--reporter=./test/file-durations-reporter.ts', ...lane.args];
  const [cmd, args] = lane.nice ? ['nice', ['-n', String(lane.nice), 'npx', ...argv]] : ['npx', argv];
  const child = spawn(cmd, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      INFERSWEEP_STACK_SLOT: lane.slot,
      INFERSWEEP_DATA: lane.data,
      INFERSWEEP_FILE_DURATIONS: durations,
      INFERSWEEP_FILE_ERRORS: errors,
      // the lane's files in the order test/lanes.ts lists them (test/lane-sequencer.ts)
      INFERSWEEP_LANE_ORDER: (lane.order ?? []).join(','),
    },
  });
  const log = createWriteStream(join(out, `${lane.name}.log`));
  for (const stream of [child.stdout, child.stderr])
    createInterface({ input: stream }).on('line', (l) => {
      log.write(l + '\n');
      process.stdout.write(prefix ? `[${lane.name}] ${l}\n` : `${l}\n`);
    });
  const closed = new Promise((resolve) => child.on('close', resolve));
  const rc = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  // the last lines, unless a process vitest left behind holds its output open
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
  await new Promise((resolve) => log.end(resolve));
  return { rc, seconds: Math.round((Date.now() - t0) / 1000) };
}

/** Run the lanes in parallel, record their phases, say why a red lane failed, and gate their reports. */
export async function runLanes(
  lanes: Lane[],
  opts: { root: string; out: string; floors: Floors; projects: Project[] },
): Promise<Summary> {
  const t0 = Date.now();
  const prefix = lanes.length > 1;
  const run = (group: Lane[]) =>
    Promise.all(
      group.map(async (lane) => {
        const { rc, seconds } = await runLane(lane, opts.out, prefix);
        appendFileSync(join(opts.out, 'phases.txt'), `${lane.name} ${seconds} ${rc}\n`);
        console.log(`[test] phase ${lane.name}: ${seconds} s (vitest exit ${rc})`);
        return { lane, rc };
      }),
    );
  // the lanes side by side, then the quiet lane alone
  const done = [...(await run(lanes.filter((l) => !l.after))), ...(await run(lanes.filter((l) => l.after)))];
  console.log(`[test] phase tests: ${Math.round((Date.now() - t0) / 1000)} s`);
  for (const { lane, rc } of done) {
    if (rc === 0) continue;
    const log = join(opts.out, `${lane.name}.log`);
    console.log(`[test] ${lane.name}: vitest exited ${rc}; its errors (${log}):`);
    if (existsSync(log)) for (const l of errorExcerpt(readFileSync(log, 'utf8'))) console.log(`[test]   ${l}`);
  }
  const { summary, lines } = judge(
    done.map(({ lane, rc }) => readLane(lane.name, opts.out, rc)),
    opts,
  );
  writeFileSync(join(opts.out, 'summary.json'), JSON.stringify(summary, null, 2));
  for (const l of lines) console.log(l);
  return summary;
}

function floorsOf(env: NodeJS.ProcessEnv): Floors {
  return env.TEST_FLOORS ? (JSON.parse(env.TEST_FLOORS) as Floors) : FLOORS;
}

/** `--project A --project B` and nothing else: the projects named, else undefined. */
export function projectsAlone(args: string[]): Project[] | undefined {
  if (args.length === 0 || args.length % 2 !== 0) return undefined;
  const names = args.filter((_, i) => i % 2 === 1);
  const known = ['unit', 'integration', 'production'];
  const pairs = args.every((a, i) => (i % 2 === 0 ? a === '--project' : known.includes(a)));
  return pairs ? (names as Project[]) : undefined;
}

/** One lane of the projects named, on lane A's stack (the unit project alone niced). */
function laneOf(name: string, args: string[], root: string, nice?: number): Lane {
  const slot = process.env[SLOTS.a.slot] ?? SLOTS.a.defaultSlot;
  return { name, slot, data: process.env[SLOTS.a.data] ?? join(root, '.infersweep'), args, nice };
}

async function main(args: string[]): Promise<number> {
  const root = join(__dirname, '..');
  process.chdir(root);
  process.env.CI = 'true';
  const alone = projectsAlone(args);
  if (args.length > 0 && !alone && args[0] !== '--nightly') {
    const child = spawn('npx', ['vitest', 'run', ...args], { stdio: 'inherit' });
    return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  }
  const out = join(root, 'test-results');
  mkdirSync(out, { recursive: true });
  rmSync(join(out, 'summary.json'), { force: true });
  rmSync(join(out, 'phases.txt'), { force: true });
  const opts = (projects: Project[]) => ({ root, out, floors: floorsOf(process.env), projects });
  const pass = (s: Summary) => (green(s) ? 0 : 1);
  if (args[0] === '--nightly') {
    process.env.INFERSWEEP_NIGHTLY = '1';
    return pass(
      await runLanes([laneOf('nightly', ['--project', 'nightly', ...args.slice(1)], root)], opts(['nightly'])),
    );
  }
  if (alone) {
    const nice = alone.join() === 'unit' ? Number(process.env.INFERSWEEP_UNIT_NICE ?? UNIT_NICE) : undefined;
    return pass(await runLanes([laneOf(alone.join('-'), args, root, nice)], opts(alone)));
  }
  let lanes: Lane[];
  try {
    lanes = planLanes(process.env, root, integrationFiles(root));
  } catch (e) {
    console.error(`[test] ${(e as Error).message}`);
    return 2;
  }
  // the workflow bundle, once for every lane (test/global-setup.ts reuses the file it names)
  const t = Date.now();
  process.env.INFERSWEEP_DATA = lanes[0]!.data;
  const { ensureWorkflowBundle } = await import('./global-setup');
  await ensureWorkflowBundle();
  const seconds = Math.round((Date.now() - t) / 1000);
  writeFileSync(join(out, 'phases.txt'), `workflow-bundle ${seconds} 0\n`);
  console.log(`[test] phase workflow bundle: ${seconds} s`);
  return pass(await runLanes(lanes, opts(['unit', 'integration', 'production'])));
}

if (require.main === module)
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
