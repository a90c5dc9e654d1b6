/** Pure parsers of Slurm 22.05 text output (formats built in commands.ts). */

export type JobState =
  | 'PENDING'
  | 'RUNNING'
  | 'SUSPENDED'
  | 'COMPLETING'
  | 'CONFIGURING'
  | 'COMPLETED'
  | 'CANCELLED'
  | 'TIMEOUT'
  | 'NODE_FAIL'
  | 'PREEMPTED'
  | 'FAILED'
  | 'BOOT_FAIL'
  | 'DEADLINE'
  | 'OUT_OF_MEMORY'
  | 'REQUEUED'
  | 'REQUEUE_HOLD'
  | 'REQUEUE_FED'
  | 'RESIZING'
  | 'REVOKED'
  | 'SIGNALING'
  | 'SPECIAL_EXIT'
  | 'STAGE_OUT'
  | 'STOPPED'
  | 'RESV_DEL_HOLD'
  | 'GONE';

/** States after which the allocation will never run again. PREEMPTED/REQUEUED are not terminal. */
export const TERMINAL_STATES: ReadonlySet<JobState> = new Set([
  'COMPLETED',
  'CANCELLED',
  'TIMEOUT',
  'NODE_FAIL',
  'FAILED',
  'BOOT_FAIL',
  'DEADLINE',
  'OUT_OF_MEMORY',
  'REVOKED',
  'SPECIAL_EXIT',
  'GONE',
] as JobState[]);

/** States in which the job still holds (or will hold) nodes: release must scancel them. */
export function isLive(state: JobState): boolean {
  return !TERMINAL_STATES.has(state);
}

export interface JobRow {
  jobId: string;
  state: JobState;
  reason: string;
  nodeList: string;
  timeLeftSeconds: number | null;
  endTime: string | null;
  name: string;
}

/**
 * Job ids squeue prints: a plain job `123`, a job-array task `123_4`, a pending array `123_[1-100%5]`,
 * a het-job component `123+0`. infersweep's own jobs are always plain; the others belong to
 * someone else sharing the login account and must parse (never crash the janitor).
 */
export const JOB_ID_PATTERN = /^\d+(?:_(?:\d+|\[[^\]|]*\]))?(?:\+\d+)?$/;

/** True for a plain job id (`123`): the only kind infersweep creates, scancels or describes. */
export function isPlainJobId(id: string): boolean {
  return /^\d+$/.test(id);
}

/**
 * squeue's `%T`: a base state, sometimes followed by flags (`CANCELLED by 0`, `RUNNING+CF`). A job
 * whose nodes are still booting or running a prolog carries the CONFIGURING flag (`CF`): granted,
 * not usable yet.
 */
export function parseJobState(text: string): JobState {
  const tokens = text
    .trim()
    .split(/[\s+]+/)
    .filter(Boolean);
  if (tokens.includes('CONFIGURING') || tokens.includes('CF')) return 'CONFIGURING';
  return (tokens[0] ?? '') as JobState;
}

/** One `JOB_FORMAT` line (`%i|%T|%r|%N|%L|%e|%j`). */
export function parseJobLine(line: string): JobRow {
  const parts = line.split('|');
  if (parts.length < 7) throw new Error(`unexpected squeue line: ${JSON.stringify(line)}`);
  const [jobId, state, reason, nodeList, left, end] = parts as [string, string, string, string, string, string];
  if (!JOB_ID_PATTERN.test(jobId.trim())) throw new Error(`unexpected squeue job id: ${JSON.stringify(line)}`);
  return {
    jobId: jobId.trim(),
    state: parseJobState(state),
    reason: reason.trim(),
    nodeList: nodeList.trim() === '(null)' ? '' : nodeList.trim(),
    timeLeftSeconds: parseDuration(left.trim()),
    endTime: /^\d{4}-\d\d-\d\dT/.test(end.trim()) ? end.trim() : null,
    name: parts.slice(6).join('|'),
  };
}

export function parseJobLines(stdout: string): JobRow[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(parseJobLine);
}

/** Like parseJobLines, but a line it cannot parse is returned in `skipped` instead of throwing. */
export function parseJobLinesTolerant(stdout: string): { rows: JobRow[]; skipped: string[] } {
  const rows: JobRow[] = [];
  const skipped: string[] = [];
  for (const l of stdout.split('\n')) {
    if (l.trim() === '') continue;
    try {
      rows.push(parseJobLine(l));
    } catch {
      skipped.push(l);
    }
  }
  return { rows, skipped };
}

/**
 * Seconds between a job's start and end (`squeue -o '%S|%e'`, both in slurmctld's local time, so
 * their difference needs no time zone); null when either is missing (N/A, Unknown) or the end is
 * before the start.
 */
export function parseHeldSeconds(stdout: string): number | null {
  const [start, end] = stdout.trim().split('\n')[0]?.split('|') ?? [];
  const t = (x: string | undefined) =>
    x && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(x.trim()) ? Date.parse(`${x.trim()}Z`) : NaN;
  const s = (t(end) - t(start)) / 1000;
  return Number.isFinite(s) && s >= 0 ? s : null;
}

/**
 * Slurm durations: `[days-]hours:minutes:seconds`, `minutes:seconds`, `days-hours`, `days-hours:minutes`,
 * or a bare number of minutes. UNLIMITED / NOT_SET / INVALID / N/A → null.
 */
export function parseDuration(text: string): number | null {
  const t = text.trim();
  let m = /^(?:(\d+)-)?(\d+):(\d+):(\d+)$/.exec(t);
  if (m) return Number(m[1] ?? 0) * 86400 + Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4]);
  m = /^(\d+)-(\d+)(?::(\d+))?$/.exec(t);
  if (m) return Number(m[1]) * 86400 + Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60;
  m = /^(\d+):(\d+)$/.exec(t);
  if (m) return Number(m[1]) * 60 + Number(m[2]);
  if (/^\d+$/.test(t)) return Number(t) * 60;
  return null;
}

/** salloc writes the id to stderr only: `Pending job allocation N` / `Granted job allocation N`. */
export function parseSalloc(stderr: string): { jobId: string | null; granted: boolean } {
  const id = /job allocation (\d+)/.exec(stderr)?.[1] ?? null;
  return { jobId: id, granted: /Granted job allocation \d+/.test(stderr) };
}

/** A salloc failure that no retry can fix (the request itself is impossible on this cluster). */
export function sallocIsPermanent(stderr: string): boolean {
  return /Requested node configuration is not available|Invalid (partition|account|qos|generic resource)|invalid (partition|account)|unrecognized option|Invalid job|More processors requested than permitted|Node count specification invalid|Requested time limit is invalid/i.test(
    stderr,
  );
}

/**
 * Pending reasons no amount of waiting resolves: the request exceeds a partition, QOS or
 * association per-job limit, or names something invalid. A job pending for one of these fails
 * the attempt at once (non-retryable) instead of waiting hours.
 */
export function pendingReasonIsPermanent(reason: string): boolean {
  return /^(PartitionNodeLimit|PartitionTimeLimit|BadConstraints|InvalidAccount|InvalidQOS|DependencyNeverSatisfied|(QOS|Assoc)Max\w*PerJob\w*|(QOS|Assoc)Max\w*PerJobLimit)$/.test(
    reason.trim(),
  );
}

/** A pending reason that says the job's partition is down or inactive (squeue(1), JOB REASON CODES): the cluster cannot run it now. */
export function partitionDown(reason: string | undefined): boolean {
  return /^Partition(Down|Inactive)$/.test((reason ?? '').trim());
}

/** `sinfo -h -N -o '%N|%t'` lines → node and state (the state's `*`/`~`/`#` suffixes kept); other lines skipped. */
export function parseNodeStates(out: string): { node: string; state: string }[] {
  return out
    .split('\n')
    .map((l) => l.trim().split('|'))
    .filter((f) => f.length === 2 && f[0] && f[1])
    .map(([node, state]) => ({ node: node!, state: state! }));
}

export interface StepRow {
  stepId: string;
  node: string;
  name: string;
}

/** `squeue -s -o '%i|%N|%j'` lines. */
export function parseStepLines(stdout: string): StepRow[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [stepId = '', node = '', ...name] = l.split('|');
      return { stepId: stepId.trim(), node: node.trim(), name: name.join('|') };
    });
}

export function parseHostnames(stdout: string): string[] {
  return stdout
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Does the next piece of work (budgetSeconds) finish before the allocation ends, with margin to spare? */
export function fitsInTime(timeLeftSeconds: number | null, budgetSeconds: number, marginSeconds: number): boolean {
  if (timeLeftSeconds === null) return false;
  return timeLeftSeconds >= budgetSeconds + marginSeconds;
}

/** Output of TAIL_SCRIPT: `missing`, or the size line followed by the tail. */
export function parseTail(stdout: string): { exists: boolean; bytes: number; tail: string } {
  if (stdout.trim() === 'missing') return { exists: false, bytes: 0, tail: '' };
  const nl = stdout.indexOf('\n');
  const first = nl < 0 ? stdout : stdout.slice(0, nl);
  if (!/^\d+$/.test(first.trim())) throw new Error(`unexpected tail output: ${JSON.stringify(stdout.slice(0, 80))}`);
  return { exists: true, bytes: Number(first), tail: nl < 0 ? '' : stdout.slice(nl + 1) };
}

/**
 * The tool a failed command could not find, from its exit code and output: `sh: 1: enroot: not
 * found`, `bash: enroot: command not found`, tcsh's `enroot: Command not found.`, env's
 * `env: 'enroot': No such file or directory`, srun's `execve(): vllm: No such file or directory`.
 * Exit 127 without a recognisable line names `fallback`. undefined: not a missing tool.
 */
export function missingTool(code: number | null, output: string, fallback?: string): string | undefined {
  const patterns = [
    /(?:^|\n)(?:[^\n:]*:\s*)?(?:line \d+:\s*|\d+:\s*)?([^\s:'"]+): (?:[Cc]ommand )?not found\.?\s*(?:\n|$)/,
    /(?:^|\n)env: '?([^\s':]+)'?: No such file or directory/,
    /execve\(\): ([^\s:]+): No such file or directory/,
    /failed to run command ['\u2018]([^'\u2019]+)['\u2019]: No such file or directory/,
  ];
  for (const re of patterns) {
    const m = re.exec(output);
    if (m?.[1]) return m[1];
  }
  return code === 127 ? fallback || 'a command' : undefined;
}

/** enroot/registry output that means the image does not exist (no point retrying). A missing tool is not a missing image. */
export function importErrorIsMissingImage(stderr: string): boolean {
  if (missingTool(null, stderr) !== undefined) return false;
  return /manifest unknown|not found|does not exist|repository .* not found|no such image|404/i.test(stderr);
}

/** `scontrol show node -o` lines → { NodeName: NodeAddr }. */
export function parseNodeAddresses(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const name = /(?:^|\s)NodeName=(\S+)/.exec(line)?.[1];
    const addr = /(?:^|\s)NodeAddr=(\S+)/.exec(line)?.[1];
    if (name && addr) out[name] = addr;
  }
  return out;
}

/** One answer of LIVENESS_SCRIPT. A section whose squeue failed carries its error, never an empty list. */
export interface LivenessObservation {
  job: { ok: true; row: JobRow | null; gone: boolean } | { ok: false; error: string };
  steps: { ok: true; rows: StepRow[] } | { ok: false; error: string };
  launchers: Record<number, boolean>;
}

/** Parse LIVENESS_SCRIPT output (pure). A missing section counts as failed (the script was cut short). */
export function parseLiveness(stdout: string, jobId: string): LivenessObservation {
  const sections = new Map<string, { rc: number; lines: string[] }>();
  const launchers: Record<number, boolean> = {};
  let cur: { rc: number; lines: string[] } | undefined;
  for (const line of stdout.split('\n')) {
    const m = /^@@(job|steps) (\d+)$/.exec(line);
    if (m) {
      cur = { rc: Number(m[2]), lines: [] };
      sections.set(m[1]!, cur);
      continue;
    }
    // squeue's stderr: the error of a failed squeue; with rc 0 a warning, never a row
    const e = /^@@err (.*)$/.exec(line);
    if (e) {
      if (cur && cur.rc !== 0 && e[1]!.trim() !== '') cur.lines.push(e[1]!);
      continue;
    }
    const p = /^@@pid (\d+) (alive|dead)$/.exec(line);
    if (p) {
      launchers[Number(p[1])] = p[2] === 'alive';
      cur = undefined;
      continue;
    }
    if (cur && line.trim() !== '') cur.lines.push(line);
  }
  const j = sections.get('job');
  let job: LivenessObservation['job'];
  if (!j) job = { ok: false, error: 'no answer for the job' };
  else if (j.rc !== 0 && j.lines.some((l) => /Invalid job id/i.test(l))) job = { ok: true, row: null, gone: true };
  else if (j.rc !== 0) job = { ok: false, error: j.lines.join('\n').slice(0, 400) || `squeue rc=${j.rc}` };
  else {
    try {
      const row = parseJobLines(j.lines.join('\n')).find((r) => r.jobId === jobId) ?? null;
      job = { ok: true, row, gone: row === null };
    } catch (err) {
      job = { ok: false, error: (err as Error).message };
    }
  }
  const s = sections.get('steps');
  let steps: LivenessObservation['steps'];
  if (!s) steps = { ok: false, error: 'no answer for the steps' };
  else if (s.rc !== 0 && s.lines.some((l) => /Invalid job id/i.test(l))) steps = { ok: true, rows: [] };
  else if (s.rc !== 0) steps = { ok: false, error: s.lines.join('\n').slice(0, 400) || `squeue -s rc=${s.rc}` };
  else steps = { ok: true, rows: parseStepLines(s.lines.join('\n')) };
  return { job, steps, launchers };
}
