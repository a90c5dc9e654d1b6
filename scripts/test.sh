#!/usr/bin/env bash
# The README's test command, and the gate: the same by hand (`npm test`) as in CI (.ci/run calls it).
#   npm test                    the per-commit projects (unit, integration, production) in parallel lanes,
#                               then the gate below; prints "N passed, N failed"
#   npm test -- <vitest args>   vitest with those arguments (a file, -t, --project …), CI mode all the same
#   npm run test:nightly        the nightly project (*.nightly.test.ts, production timescales), gated
# CI=true always: a stray .only fails its file and a missing snapshot fails instead of being written.
# Lanes: three integration lanes (INFERSWEEP_TEST_LANES, default 3), each on its own local stack
# (INFERSWEEP_STACK_SLOT / INFERSWEEP_DATA, scripts/stack.sh), plus the unit project beside them (niced). Lane A runs
# the files that load the CPU (every real-vLLM file, so two vLLM deployments never overlap) and the
# client-saturation-gated files (so two of them never overlap); lane C the Slurm-only files, then six files
# that load little CPU, to even the lanes (LANE_C below); lane B every other integration file (a new file lands there), then the
# production project (its stack uses lane B's Slurm). Each lane writes its own JSON report; the gate requires
# every report and fails on any failed, skipped or todo test, a non-zero vitest exit, or fewer tests or files
# per project than its floor. INFERSWEEP_TEST_LANES=2 runs lane C's files in lane B; INFERSWEEP_TEST_LANES=1
# runs every integration file in one lane on one stack (a machine with room for one).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export CI=true
OUT=test-results
mkdir -p "$OUT"

# The floors: tests and files that must have run per project, equal to the counts (vitest list
# --project P --json): a commit that adds tests raises them, one that removes tests lowers them.
FLOORS=${TEST_FLOORS:-'{
  "unit":        { "tests": 798, "files": 108 },
  "integration": { "tests": 154, "files": 37 },
  "production":  { "tests": 11,  "files": 5 },
  "nightly":     { "tests": 6,   "files": 3 }
}'}

# Lane A, in this order (the saturation-gated files first, while lane B mostly waits on queues)
LANE_A=(
  libs/orchestrator/test/fidelity.int.test.ts
  libs/agentx/test/agentx.int.test.ts
  libs/orchestrator/test/sweep.int.test.ts
  libs/orchestrator/test/concurrent-points.int.test.ts
  libs/agentx/test/aiperf.int.test.ts
  libs/agentx/test/cross-client.int.test.ts
  libs/agentx/test/cross-client-vllm.int.test.ts
  libs/orchestrator/test/local-vllm.int.test.ts
  libs/orchestrator/test/hybrid-lb.int.test.ts
  test/vllm/plugin.int.test.ts
  test/smoke/temporal.int.test.ts
  test/smoke/simulator.int.test.ts
  test/smoke/slurm-ssh.int.test.ts
  test/smoke/web-ui.int.test.ts
)

# Lane C (three lanes, the default): the Slurm-only files, which mostly wait on slurmd timeouts and queues and
# load no CPU; with INFERSWEEP_TEST_LANES=2 they run in lane B (timings.int and cli.int then in lane B too)
LANE_C=(
  libs/slurm/test/reliability.int.test.ts
  libs/slurm/test/failures.int.test.ts
  libs/slurm/test/lifecycle.int.test.ts
  libs/slurm/test/sites.int.test.ts
  libs/slurm/test/ssh.int.test.ts
  libs/slurm/test/image.int.test.ts
  # then files that load little CPU and are not saturation-gated, so the three lanes end near the same time
  # (CI on 2 cores, 2026-12-04: lanes A/B/C 1296/1176/305 s with timings and cli in A; 861/1457/794 s with them
  # here, lane B then ~1190 s without a stalled test: history and plan-blip moved here; test-results/phases.txt)
  libs/orchestrator/test/timings.int.test.ts
  apps/cli/test/cli.int.test.ts
  apps/cli/test/history.int.test.ts
  libs/orchestrator/test/plan-blip.int.test.ts
  # 2026-12-04 afternoon, lanes A/B/C 1120/1232/1080 s: these two (~39 s and ~34 s) from lane B
  apps/cli/test/schedule-run.int.test.ts
  libs/orchestrator/test/secrets.int.test.ts
)

now() { date +%s; }

# The gate over the named JSON reports: sums them, prints the slowest files and one summary line,
# writes $OUT/summary.json; exits 1 on any failure.
gate() {
  FLOORS="$FLOORS" node - "$@" <<'EOF'
const fs = require('fs');
const floors = JSON.parse(process.env.FLOORS);
const projectOf = (f) =>
  f.endsWith('.nightly.test.ts') ? 'nightly' : f.endsWith('.prod.test.ts') ? 'production' : f.endsWith('.int.test.ts') ? 'integration' : 'unit';
const problems = [];
const per = {};
const files = [];
const failures = []; // each failed test with the head of its message, printed last: CI keeps a log's tail
let passed = 0, failed = 0;
for (const arg of process.argv.slice(2)) {
  const [report, rc] = arg.split('=');
  if (Number(rc) !== 0) problems.push(`${report}: vitest exited ${rc}`);
  let r;
  try {
    r = JSON.parse(fs.readFileSync(report, 'utf8'));
  } catch (e) {
    problems.push(`${report}: no report (${e.code ?? e.message})`);
    failed += 1;
    continue;
  }
  // each file's wall time with its hooks (test/file-durations-reporter.ts), else the span of its tests
  let durations = {};
  try {
    durations = JSON.parse(fs.readFileSync(report.replace(/\.json$/, '.durations.json'), 'utf8'));
  } catch {}
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  if (r.numPendingTests + r.numTodoTests > 0) problems.push(`${report}: ${r.numPendingTests} skipped and ${r.numTodoTests} todo tests (none may be)`);
  for (const t of r.testResults) {
    const name = t.name.replace(process.cwd() + '/', '');
    const p = (per[projectOf(name)] ??= { tests: 0, files: 0 });
    p.tests += t.assertionResults.filter((a) => a.status === 'passed' || a.status === 'failed').length;
    p.files += 1;
    const s = durations[t.name] ?? (t.endTime - t.startTime) / 1000;
    files.push({ name, s, status: t.status, tests: t.assertionResults.length });
    for (const a of t.assertionResults) {
      if (['skipped', 'pending', 'todo', 'disabled'].includes(a.status)) problems.push(`skipped: ${name} > ${a.fullName}`);
      if (a.status === 'failed') failures.push({ what: `${name} > ${a.fullName}`, why: (a.failureMessages ?? []).join('\n') });
    }
    // a file that failed without a failed test (an import error, a failing hook) is a failure of its own
    if (t.status === 'failed' && !t.assertionResults.some((a) => a.status === 'failed')) {
      failed += 1;
      failures.push({ what: name, why: t.message ?? '(no message)' });
    }
  }
}
for (const [project, got] of Object.entries(per)) {
  const f = floors[project];
  if (got.tests < f.tests || got.files < f.files)
    problems.push(`${project}: ${got.tests} tests in ${got.files} files ran, the floor is ${f.tests} tests in ${f.files} files`);
}
const expected = process.env.GATE_PROJECTS.split(',');
for (const project of expected) if (!per[project]) problems.push(`${project}: no test ran`);
files.sort((a, b) => b.s - a.s);
console.log('\n[gate] per file (s, tests, status), slowest first:');
for (const f of files) console.log(`[gate] ${f.s.toFixed(1).padStart(7)} ${String(f.tests).padStart(4)} ${f.status.padEnd(6)} ${f.name}`);
console.log(`[gate] per project: ${Object.entries(per).map(([p, g]) => `${p} ${g.tests} tests in ${g.files} files`).join('; ')}`);
for (const f of failures) {
  console.log(`[gate] FAILED ${f.what}`);
  for (const l of f.why.split('\n').slice(0, 24)) console.log(`[gate]   ${l.slice(0, 240)}`);
}
for (const p of problems) console.log(`[gate] FAIL ${p}`);
if (problems.length && failed === 0) failed = problems.length;
fs.writeFileSync(`${process.env.OUT}/summary.json`, JSON.stringify({ passed, failed, problems, per, files }, null, 2));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && problems.length === 0 && passed > 0 ? 0 : 1);
EOF
}

vitest_json() { # report-name, then vitest arguments
  local report=$OUT/$1.json
  shift
  rm -f "$report" "${report%.json}.durations.json"
  # shellcheck disable=SC2086  # VITEST_NICE, when set, is "nice -n N"
  INFERSWEEP_FILE_DURATIONS="${report%.json}.durations.json" ${VITEST_NICE:-} npx vitest run --reporter=default \
    --reporter=json --outputFile.json="$report" --reporter=./test/file-durations-reporter.ts "$@"
}

if [ "${1:-}" = "--gate" ]; then # --gate PROJECTS REPORT=RC…: the gate alone over existing reports (test/gate.test.ts)
  shift
  projects=$1
  shift
  OUT=${GATE_OUT:-$OUT} GATE_PROJECTS=$projects gate "$@"
  exit
fi
if [ "${1:-}" = "--nightly" ]; then
  shift
  export INFERSWEEP_NIGHTLY=1
  rc=0
  rm -f "$OUT/summary.json"
  vitest_json nightly --project nightly "$@" || rc=$?
  # shellcheck disable=SC2097,SC2098  # OUT is the same value in the function's environment and in its argument
  OUT=$OUT GATE_PROJECTS=nightly gate "$OUT/nightly.json=$rc"
  exit
fi
[ $# -eq 0 ] || exec npx vitest run "$@"

LANE_A_SLOT=${INFERSWEEP_STACK_SLOT:-0}
LANE_A_DATA=${INFERSWEEP_DATA:-$ROOT/.infersweep}
LANE_B_SLOT=${INFERSWEEP_LANE_B_SLOT:-9}
LANE_B_DATA=${INFERSWEEP_LANE_B_DATA:-$ROOT/.infersweep-$LANE_B_SLOT}
LANE_C_SLOT=${INFERSWEEP_LANE_C_SLOT:-8}
LANE_C_DATA=${INFERSWEEP_LANE_C_DATA:-$ROOT/.infersweep-$LANE_C_SLOT}
LANES=${INFERSWEEP_TEST_LANES:-3}
if [ "$LANES" = 3 ] && { [ "$LANE_C_SLOT" = "$LANE_A_SLOT" ] || [ "$LANE_C_SLOT" = "$LANE_B_SLOT" ]; }; then
  echo "[test] lane C needs its own stack slot: INFERSWEEP_LANE_C_SLOT ($LANE_C_SLOT) is another lane's" >&2
  exit 2
fi
[ "$LANES" = 1 ] || [ "$LANE_A_SLOT" != "$LANE_B_SLOT" ] || {
  echo "[test] lane B needs its own stack slot: INFERSWEEP_LANE_B_SLOT ($LANE_B_SLOT) is lane A's" >&2
  exit 2
}
for f in "${LANE_A[@]}" "${LANE_C[@]}"; do [ -f "$f" ] || { echo "[test] a lane lists $f, which does not exist: edit scripts/test.sh" >&2; exit 2; }; done
NOT_B=("${LANE_A[@]}")
[ "$LANES" != 3 ] || NOT_B+=("${LANE_C[@]}")
mapfile -t LANE_B < <(
  find libs apps test -name '*.int.test.ts' -not -path '*/node_modules/*' | sort | grep -vxF -f <(printf '%s\n' "${NOT_B[@]}")
)

rm -f "$OUT"/*.rc "$OUT/summary.json" "$OUT/phases.txt"
# the workflow bundle, once for every lane (test/global-setup.ts reuses the file it names)
t=$(now)
INFERSWEEP_WORKFLOW_BUNDLE=$(
  INFERSWEEP_DATA=$LANE_A_DATA npx tsx -e 'require("./test/global-setup.ts").ensureWorkflowBundle().then((f) => console.log(f))' | tail -n1
)
export INFERSWEEP_WORKFLOW_BUNDLE
[ -s "$INFERSWEEP_WORKFLOW_BUNDLE" ] || { echo "[test] the workflow bundle was not built" >&2; exit 1; }
echo "workflow-bundle $(($(now) - t)) 0" >"$OUT/phases.txt"
echo "[test] phase workflow bundle: $(($(now) - t)) s"

lane() { # name slot data vitest-args…: prefixes its output, records its exit code and wall time
  local name=$1 slot=$2 data=$3 t rc=0
  shift 3
  t=$(now)
  INFERSWEEP_STACK_SLOT=$slot INFERSWEEP_DATA=$data vitest_json "$name" "$@" 2>&1 | tee "$OUT/$name.log" | sed -u "s/^/[$name] /" || rc=$?
  echo "$rc" >"$OUT/$name.rc"
  echo "$name $(($(now) - t)) $rc" >>"$OUT/phases.txt"
  echo "[test] phase $name: $(($(now) - t)) s (vitest exit $rc)"
}
t0=$(now)
# The unit project is throughput work beside latency-bound lanes: niced, it takes the CPU the lanes leave (CI on
# 2 cores, 2026-12-04: the host was 97-99 % busy while unit ran beside the lanes, 57-76 % after it ended)
VITEST_NICE="nice -n ${INFERSWEEP_UNIT_NICE:-10}" lane unit "$LANE_A_SLOT" "$LANE_A_DATA" --project unit &
pids=($!)
if [ "$LANES" = 1 ]; then
  lane lane-a "$LANE_A_SLOT" "$LANE_A_DATA" --project integration --project production "${LANE_A[@]}" "${LANE_B[@]}" test/production/ &
  pids+=($!)
  reports=(unit lane-a)
else
  lane lane-a "$LANE_A_SLOT" "$LANE_A_DATA" --project integration "${LANE_A[@]}" &
  pids+=($!)
  lane lane-b "$LANE_B_SLOT" "$LANE_B_DATA" --project integration --project production "${LANE_B[@]}" test/production/ &
  pids+=($!)
  reports=(unit lane-a lane-b)
  if [ "$LANES" = 3 ]; then
    lane lane-c "$LANE_C_SLOT" "$LANE_C_DATA" --project integration "${LANE_C[@]}" &
    pids+=($!)
    reports+=(lane-c)
  fi
fi
for p in "${pids[@]}"; do wait "$p" || true; done
echo "[test] phase tests: $(($(now) - t0)) s"
# A red vitest exit without a failed test (an unhandled error, a worker that died, a hook that timed out)
# says why here, next to the summary, since CI logs keep only their tail.
for r in "${reports[@]}"; do
  [ "$(cat "$OUT/$r.rc" 2>/dev/null || echo missing)" = 0 ] && continue
  echo "[test] $r: vitest exited $(cat "$OUT/$r.rc" 2>/dev/null || echo '(no exit code)'); its errors ($OUT/$r.log):"
  grep -n -i -E -A12 'unhandled|worker exited|timed out|error:|FAIL ' "$OUT/$r.log" 2>/dev/null | head -n 80 | sed "s/^/[test]   /" || true
done
args=()
for r in "${reports[@]}"; do args+=("$OUT/$r.json=$(cat "$OUT/$r.rc" 2>/dev/null || echo missing)"); done
OUT=$OUT GATE_PROJECTS=unit,integration,production gate "${args[@]}"
