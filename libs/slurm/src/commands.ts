/**
 * Pure builders of every Slurm / shell command this lib runs, as argv arrays. Values are never
 * spliced into shell text: where shell syntax is unavoidable (redirection, flock on an fd) the
 * script is a constant and the values travel as positional parameters ("$1", "$@"), quoted by
 * shellJoin like everything else.
 */
import { createHash } from 'node:crypto';
import { isEnvName, withEnv } from './quote';

export interface AllocateRequest {
  /** Unique per sweep attempt (libs/core allocationJobName); used to find the job if salloc's output is lost. */
  jobName: string;
  nodes: number;
  gpusPerNode?: number;
  /** The cluster has GPU gres configured: request `--gres=gpu:N`. */
  gres: boolean;
  exclusive: boolean;
  timeLimitMinutes: number;
  partition?: string;
  account?: string;
  /**
   * How long the job may wait in the queue for its grant (default DEFAULT_GRANT_TIMEOUT_SECONDS,
   * hours: queue waits on a busy cluster are long). The detached salloc runs under `timeout` of
   * this plus a margin, so a sweep that vanished never leaves a job queued past it.
   */
  grantTimeoutSeconds?: number;
  /** Where the detached salloc writes its output on the login node (default /tmp/<jobName>.salloc.log). */
  logFile?: string;
  /** Site-specific salloc flags (--qos, --constraint, --reservation, …), passed verbatim as argv. */
  extraArgs?: string[];
  /** Nodes the job must not get (`--exclude`): the worker's quarantine (libs/orchestrator/src/quarantine.ts), an independent replicate's last nodes. */
  exclude?: string[];
}

const NODE_NAME_OK = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A Slurm node name (a hostname-like word), never a list or a pattern. */
export function assertNodeName(node: string): string {
  if (!NODE_NAME_OK.test(node)) throw new TypeError(`not a node name: ${JSON.stringify(node)}`);
  return node;
}

const JOB_NAME_OK = /^[^,\x00-\x1f\x7f]{1,200}$/;

/** Job names must be findable with `squeue --name` (a comma-separated list) and fit on one squeue line. */
export function assertJobName(name: string): void {
  if (!JOB_NAME_OK.test(name))
    throw new TypeError(`job name must be 1-200 chars without commas or control characters: ${JSON.stringify(name)}`);
}

/** 12 hours: a job keeps its place in the queue that long before the attempt counts as failed. */
export const DEFAULT_GRANT_TIMEOUT_SECONDS = 12 * 3600;

/** Slack of the outer `timeout` past the grant wait (the caller cancels by name first). */
export const GRANT_TIMEOUT_SLACK_SECONDS = 60;

/**
 * `salloc --no-shell` under an outer `timeout` (a salloc killed while waiting withdraws its job).
 * No `--immediate`: the queue wait is bounded by the caller (and the outer timeout), not by salloc.
 */
export function sallocArgv(req: AllocateRequest): string[] {
  assertJobName(req.jobName);
  if (!Number.isInteger(req.nodes) || req.nodes < 1)
    throw new TypeError(`nodes must be a positive integer: ${req.nodes}`);
  if (!Number.isInteger(req.timeLimitMinutes) || req.timeLimitMinutes < 1)
    throw new TypeError(`timeLimitMinutes must be a positive integer: ${req.timeLimitMinutes}`);
  const grant = req.grantTimeoutSeconds ?? DEFAULT_GRANT_TIMEOUT_SECONDS;
  if (!Number.isInteger(grant) || grant < 1)
    throw new TypeError(`grantTimeoutSeconds must be a positive integer: ${grant}`);
  const argv = [
    'timeout',
    '--signal=TERM',
    '--kill-after=10',
    String(grant + GRANT_TIMEOUT_SLACK_SECONDS),
    'salloc',
    '--no-shell',
    `--job-name=${req.jobName}`,
    `--nodes=${req.nodes}`,
    `--time=${req.timeLimitMinutes}`,
  ];
  if (req.gpusPerNode !== undefined && req.gpusPerNode > 0) {
    if (!Number.isInteger(req.gpusPerNode)) throw new TypeError(`gpusPerNode must be an integer: ${req.gpusPerNode}`);
    argv.push(req.gres ? `--gres=gpu:${req.gpusPerNode}` : `--gpus-per-node=${req.gpusPerNode}`);
  }
  if (req.exclusive) argv.push('--exclusive');
  if (req.partition) argv.push(`--partition=${req.partition}`);
  if (req.account) argv.push(`--account=${req.account}`);
  if (req.exclude && req.exclude.length > 0) argv.push(`--exclude=${req.exclude.map(assertNodeName).join(',')}`);
  argv.push(...(req.extraArgs ?? []));
  return argv;
}

/** One line per job: id|state|reason|nodelist|timeleft|endtime|name (name last: it may contain '|'). */
export const JOB_FORMAT = '%i|%T|%r|%N|%L|%e|%j';

/** A job's start and end time as slurmctld keeps them (`%S|%e`, while it remembers the job: MinJobAge). */
export function squeueTimesArgv(jobId: string): string[] {
  return ['squeue', '-j', assertJobId(jobId), '-t', 'all', '-h', '-o', '%S|%e'];
}

export function squeueJobArgv(jobId: string): string[] {
  return ['squeue', '-j', assertJobId(jobId), '-t', 'all', '-h', '-o', JOB_FORMAT];
}

/**
 * Jobs of the login user with this name (`--me`: another user's job of the same name is never
 * adopted or cancelled).
 */
export function squeueByNameArgv(name: string, allStates = true): string[] {
  assertJobName(name);
  return ['squeue', '--me', `--name=${name}`, ...(allStates ? ['-t', 'all'] : []), '-h', '-o', JOB_FORMAT];
}

/** The salloc of `req`, detached from the SSH session (it outlives a dropped channel or a worker restart). */
export function sallocDetachedArgv(req: AllocateRequest): string[] {
  return detachedArgv(sallocLogFile(req), sallocArgv(req));
}

export function sallocLogFile(req: Pick<AllocateRequest, 'jobName' | 'logFile'>): string {
  return req.logFile ?? `/tmp/${req.jobName.replace(/[^A-Za-z0-9._-]/g, '_')}.salloc.log`;
}

/** Each node of the partition (the default one when none is named) with its compact state (`%t`: idle, down*, drain, …). */
export function sinfoNodesArgv(partition?: string): string[] {
  return ['sinfo', '-h', '-N', ...(partition ? ['-p', partition] : []), '-o', '%N|%t'];
}

/**
 * Live (pending/running/completing/…) jobs of the login user, every name: the janitor filters by
 * its deployment's prefix. `--me`: on a shared cluster squeue otherwise lists everyone's jobs.
 */
export function squeueLiveArgv(): string[] {
  return ['squeue', '--me', '-h', '-o', JOB_FORMAT];
}

export function hostnamesArgv(nodelist: string): string[] {
  return ['scontrol', 'show', 'hostnames', nodelist];
}

/** `scontrol show node -o a,b` (one line per node, Key=Value). */
export function showNodesArgv(nodes: string[]): string[] {
  for (const n of nodes) if (!/^[A-Za-z0-9._-]+$/.test(n)) throw new TypeError(`not a node name: ${JSON.stringify(n)}`);
  return ['scontrol', 'show', 'node', '-o', nodes.join(',')];
}

export const STEP_FORMAT = '%i|%N|%j';

export function squeueStepsArgv(jobId: string): string[] {
  return ['squeue', '-s', '-j', assertJobId(jobId), '-h', '-o', STEP_FORMAT];
}

export function scancelArgv(jobOrStep: string): string[] {
  if (!/^\d+(\.\d+)?$/.test(jobOrStep)) throw new TypeError(`not a job or step id: ${JSON.stringify(jobOrStep)}`);
  return ['scancel', jobOrStep];
}

export function assertJobId(jobId: string): string {
  if (!/^\d+$/.test(jobId)) throw new TypeError(`not a Slurm job id: ${JSON.stringify(jobId)}`);
  return jobId;
}

export interface StepRuntime {
  runtime: 'host' | 'pyxis';
  /** pyxis: the imported squash file (or image reference) for --container-image. */
  containerImage?: string;
  /** pyxis: `src:dst[:flags]` entries for --container-mounts. */
  containerMounts?: string[];
  /**
   * Export only the listed env (plus Slurm's own SLURM_* variables) into the step; always on for
   * pyxis (no host env leaks into the container). For host steps, default off (the task inherits
   * the login environment, the listed env is added on top).
   */
  isolateEnv?: boolean;
  /**
   * Under isolateEnv, names of the login environment the step keeps (their values are srun's own, the
   * login shell's): what a host step needs to find its executables and libraries
   * ({@link LOGIN_ENV}). Never the whole environment.
   */
  loginEnv?: readonly string[];
}

/**
 * What an isolated host step keeps of the login environment, and what a local login executor
 * (`loginHost: { local: true }`, ./executor.ts) hands its commands of the worker's: where executables
 * and libraries are, who and where it is, its locale. Everything else (the credentials of a login
 * session or of a worker included) stays out.
 */
export const LOGIN_ENV: readonly string[] = [
  'PATH',
  'LD_LIBRARY_PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'TMPDIR',
  'TZ',
];

export const PYXIS_FLAGS = [
  '--no-container-entrypoint',
  '--container-remap-root',
  '--no-container-mount-home',
] as const;

export interface StepSpec extends StepRuntime {
  jobId: string;
  node: string;
  stepName: string;
  argv: string[];
  env: Record<string, string>;
  /**
   * Names of secrets already in srun's own environment (the executor exported them from stdin):
   * listed in `--export`, never given a value on the command line.
   */
  secretNames?: string[];
}

/** `srun … -- argv` for one single-task step on one named node of an existing allocation. */
export function srunArgv(spec: StepSpec): string[] {
  assertJobId(spec.jobId);
  if (!/^[A-Za-z0-9._-]+$/.test(spec.node)) throw new TypeError(`not a node name: ${JSON.stringify(spec.node)}`);
  assertJobName(spec.stepName);
  if (spec.argv.length === 0) throw new TypeError('step argv is empty');
  const base = [
    'srun',
    `--jobid=${spec.jobId}`,
    '--overlap',
    '--nodes=1',
    '--ntasks=1',
    `--nodelist=${spec.node}`,
    `--job-name=${spec.stepName}`,
  ];
  const names = Object.keys(spec.env);
  for (const k of names)
    if (!isEnvName(k)) throw new TypeError(`invalid environment variable name: ${JSON.stringify(k)}`);
  const secrets = spec.secretNames ?? [];
  for (const k of secrets) {
    if (!isEnvName(k)) throw new TypeError(`invalid secret variable name: ${JSON.stringify(k)}`);
    if (names.includes(k)) throw new TypeError(`${k} is both a plain and a secret variable`);
  }
  if (spec.runtime === 'pyxis') {
    if (!spec.containerImage) throw new TypeError('pyxis runtime needs containerImage');
    for (const m of spec.containerMounts ?? [])
      if (m.includes(',')) throw new TypeError(`container mount may not contain a comma: ${JSON.stringify(m)}`);
    base.push(`--container-image=${spec.containerImage}`);
    if (spec.containerMounts?.length) base.push(`--container-mounts=${spec.containerMounts.join(',')}`);
    // InferenceX's and the bash runner's pyxis flags: the image's entrypoint must not wrap the command, root inside
    // the container maps to the user, and $HOME stays out (it would shadow the container's)
    base.push(...PYXIS_FLAGS);
  }
  if (spec.runtime === 'pyxis' || spec.isolateEnv) {
    // values travel in srun's own environment (env K=V srun …), only their names on the command line
    // a container keeps its own PATH and libraries: the login's are for host steps only
    const kept = (spec.runtime === 'pyxis' ? [] : (spec.loginEnv ?? [])).filter(
      (k) => !names.includes(k) && !secrets.includes(k),
    );
    for (const k of kept)
      if (!isEnvName(k)) throw new TypeError(`invalid environment variable name: ${JSON.stringify(k)}`);
    const exported = [...kept, ...names, ...secrets];
    base.push(`--export=${exported.length ? exported.join(',') : 'NONE'}`);
    return withEnv([...base, '--', ...spec.argv], spec.env);
  }
  // host: the task inherits the login environment; secrets are named explicitly all the same
  if (secrets.length > 0) base.push(`--export=ALL,${secrets.join(',')}`);
  return [...base, '--', ...withEnv(spec.argv, spec.env)];
}

/** Detach a command from the SSH session: `setsid nohup CMD >log 2>&1 </dev/null &`, print its pid. */
export const LAUNCH_SCRIPT =
  'log=$1; shift; mkdir -p -- "$(dirname -- "$log")" || exit 70; ' +
  'setsid nohup "$@" >"$log" 2>&1 </dev/null & echo "$!"';

export function detachedArgv(logFile: string, argv: string[]): string[] {
  if (!logFile.startsWith('/')) throw new TypeError(`log file must be an absolute path: ${JSON.stringify(logFile)}`);
  return ['bash', '-c', LAUNCH_SCRIPT, 'infersweep-launch', logFile, ...argv];
}

/**
 * Is the launcher (srun on the login node) still alive? prints alive|dead. A zombie is dead, and
 * a reused pid is told apart by the step name on its command line.
 */
export const PID_ALIVE_SCRIPT =
  'st=$(sed "s/.*) //" "/proc/$1/stat" 2>/dev/null | cut -d" " -f1); ' +
  'if [ -n "$st" ] && [ "$st" != Z ] && tr "\\0" "\\n" < "/proc/$1/cmdline" 2>/dev/null | grep -qxF -- "--job-name=$2"; ' +
  'then echo alive; else echo dead; fi';

export function pidAliveArgv(pid: number, stepName: string): string[] {
  return ['bash', '-c', PID_ALIVE_SCRIPT, 'infersweep-pid', String(pid), stepName];
}

/** TERM a launcher (detached salloc/srun) if its pid still runs a command with `--job-name=<name>`. */
export const KILL_LAUNCHER_SCRIPT =
  'if tr "\\0" "\\n" < "/proc/$1/cmdline" 2>/dev/null | grep -qxF -- "--job-name=$2"; then kill -TERM "$1" 2>/dev/null; fi; exit 0';

export function killLauncherArgv(pid: number, name: string): string[] {
  if (!Number.isInteger(pid) || pid <= 0) throw new TypeError(`not a pid: ${pid}`);
  return ['bash', '-c', KILL_LAUNCHER_SCRIPT, 'infersweep-kill', String(pid), name];
}

/**
 * One liveness observation in one round trip: the job's row, its steps, and whether each
 * launcher pid still runs (same test as PID_ALIVE_SCRIPT). Each section starts with a marker line
 * `@@<section> <rc>` so a failed squeue is told apart from an empty answer; squeue's stderr follows
 * as `@@err <line>` lines, so a site's warning on stderr never mixes with the rows parsed.
 */
export const LIVENESS_SCRIPT = [
  'j=$1 jf=$2 sf=$3; shift 3; e=$(mktemp 2>/dev/null) || e=/dev/null',
  'o=$(squeue -j "$j" -t all -h -o "$jf" 2>"$e"); echo "@@job $?"; [ -z "$o" ] || printf "%s\\n" "$o"; sed "s/^/@@err /" "$e" 2>/dev/null',
  'o=$(squeue -s -j "$j" -h -o "$sf" 2>"$e"); echo "@@steps $?"; [ -z "$o" ] || printf "%s\\n" "$o"; sed "s/^/@@err /" "$e" 2>/dev/null',
  '[ "$e" = /dev/null ] || rm -f "$e"',
  'while [ "$#" -ge 2 ]; do',
  '  st=$(sed "s/.*) //" "/proc/$1/stat" 2>/dev/null | cut -d" " -f1)',
  '  if [ -n "$st" ] && [ "$st" != Z ] && tr "\\0" "\\n" < "/proc/$1/cmdline" 2>/dev/null | grep -qxF -- "--job-name=$2"; then a=alive; else a=dead; fi',
  '  echo "@@pid $1 $a"; shift 2',
  'done',
].join('\n');

export function livenessArgv(jobId: string, launchers: { pid: number; name: string }[] = []): string[] {
  assertJobId(jobId);
  const rest: string[] = [];
  for (const l of launchers) {
    if (!Number.isInteger(l.pid) || l.pid <= 0) continue;
    assertJobName(l.name);
    rest.push(String(l.pid), l.name);
  }
  return ['bash', '-c', LIVENESS_SCRIPT, 'infersweep-liveness', jobId, JOB_FORMAT, STEP_FORMAT, ...rest];
}

/**
 * Copy a log capped at `maxBytes`: the last `maxBytes` bytes, after a header line saying how much
 * was left out (the end of a server log is where its failure is).
 */
export const CAPPED_CAT_SCRIPT =
  'f=$1; cap=$2; [ -e "$f" ] || { echo "infersweep-logs: missing: $f" >&2; exit 66; }; ' +
  'n=$(stat -c %s -- "$f") || exit 1; ' +
  'if [ "$n" -gt "$cap" ]; then echo "[infersweep: log truncated, first $((n - cap)) of $n bytes omitted]"; tail -c "$cap" -- "$f"; else cat -- "$f"; fi';

export function cappedCatArgv(file: string, maxBytes: number): string[] {
  if (!Number.isInteger(maxBytes) || maxBytes < 1)
    throw new TypeError(`maxBytes must be a positive integer: ${maxBytes}`);
  return ['bash', '-c', CAPPED_CAT_SCRIPT, 'infersweep-cat', file, String(maxBytes)];
}

export const TAIL_SCRIPT =
  'f=$1; n=$2; if [ ! -e "$f" ]; then echo missing; exit 0; fi; ' + 'stat -c %s -- "$f" && tail -n "$n" -- "$f"';

export function tailArgv(file: string, lines: number): string[] {
  return ['bash', '-c', TAIL_SCRIPT, 'infersweep-tail', file, String(lines)];
}

// ------------------------------------------------------------------ images

/** Registry reference → a file name safe anywhere (readable part + hash against collisions). */
export function imageFileName(image: string): string {
  if (!image.trim()) throw new TypeError('empty image name');
  const readable = image
    .replace(/^[a-z]+:\/\//, '')
    .replace(/[^A-Za-z0-9._-]+/g, '+')
    .replace(/^[.+-]+/, '')
    .slice(0, 120);
  const hash = createHash('sha256').update(image).digest('hex').slice(0, 12);
  return `${readable || 'image'}-${hash}.sqsh`;
}

/** Exit codes of IMPORT_SCRIPT. */
export const IMPORT_EXIT = { lockOpen: 71, importFailed: 72, invalidResult: 73, rename: 74, lockTimeout: 75 } as const;

/**
 * Under `flock -w`: a lock not acquired in time exits 75 (never falls through); an existing
 * valid squash file is used as is; otherwise the import writes to a temporary name, is validated
 * with `unsquashfs -l`, and renamed over the final name (atomic on one filesystem).
 */
export const IMPORT_SCRIPT = [
  'squash=$1 lock=$2 wait=$3 tmp=$4; shift 4',
  'mkdir -p -- "$(dirname -- "$squash")" || exit 71',
  'exec 9>>"$lock" || { echo "infersweep-image: cannot open lock $lock" >&2; exit 71; }',
  'flock -w "$wait" 9 || { echo "infersweep-image: lock not acquired within ${wait}s: $lock" >&2; exit 75; }',
  'if [ -e "$squash" ]; then',
  '  if unsquashfs -l "$squash" >/dev/null 2>&1; then echo "infersweep-image: cached"; exit 0; fi',
  '  echo "infersweep-image: existing file is not a valid squashfs, re-importing: $squash" >&2',
  'fi',
  'trap \'rm -f -- "$tmp"\' EXIT',
  'rm -f -- "$tmp"',
  '"$@" || { rc=$?; echo "infersweep-image: import command failed rc=$rc" >&2; exit 72; }',
  '{ [ -s "$tmp" ] && unsquashfs -l "$tmp" >/dev/null 2>&1; } || { echo "infersweep-image: import produced no valid squashfs" >&2; exit 73; }',
  'mv -f -- "$tmp" "$squash" || exit 74',
  'echo "infersweep-image: imported"',
].join('\n');

/** The real import on a cluster with enroot. `{out}` and `{image}` are substituted per import. */
export const ENROOT_IMPORT = ['enroot', 'import', '-o', '{out}', 'docker://{image}'];

export function importArgv(p: {
  squashPath: string;
  lockPath: string;
  lockTimeoutSeconds: number;
  tmpPath: string;
  image: string;
  importCommand: string[];
}): string[] {
  if (!Number.isInteger(p.lockTimeoutSeconds) || p.lockTimeoutSeconds < 0)
    throw new TypeError(`lockTimeoutSeconds must be a non-negative integer: ${p.lockTimeoutSeconds}`);
  if (!p.importCommand.some((a) => a.includes('{out}'))) throw new TypeError('importCommand must contain {out}');
  const cmd = p.importCommand.map((a) => a.replaceAll('{out}', p.tmpPath).replaceAll('{image}', p.image));
  return [
    'bash',
    '-c',
    IMPORT_SCRIPT,
    'infersweep-image',
    p.squashPath,
    p.lockPath,
    String(p.lockTimeoutSeconds),
    p.tmpPath,
    ...cmd,
  ];
}
