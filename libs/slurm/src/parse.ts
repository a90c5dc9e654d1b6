/** Pure parsers of Slurm 22.05 text output (formats built in commands.ts). */

export type JobState =
  | 'PENDING' | 'RUNNING' | 'SUSPENDED' | 'COMPLETING' | 'CONFIGURING' | 'COMPLETED' | 'CANCELLED'
  | 'TIMEOUT' | 'NODE_FAIL' | 'PREEMPTED' | 'FAILED' | 'BOOT_FAIL' | 'DEADLINE' | 'OUT_OF_MEMORY'
  | 'REQUEUED' | 'REQUEUE_HOLD' | 'REQUEUE_FED' | 'RESIZING' | 'REVOKED' | 'SIGNALING' | 'SPECIAL_EXIT'
  | 'STAGE_OUT' | 'STOPPED' | 'RESV_DEL_HOLD' | 'GONE';

/** States after which the allocation will never run again. PREEMPTED/REQUEUED are not terminal. */
export const TERMINAL_STATES: ReadonlySet<JobState> = new Set([
  'COMPLETED', 'CANCELLED', 'TIMEOUT', 'NODE_FAIL', 'FAILED', 'BOOT_FAIL', 'DEADLINE', 'OUT_OF_MEMORY', 'REVOKED', 'SPECIAL_EXIT', 'GONE',
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

/** One `JOB_FORMAT` line (`%i|%T|%r|%N|%L|%e|%j`). */
export function parseJobLine(line: string): JobRow {
  const parts = line.split('|');
  if (parts.length < 7) throw new Error(`unexpected squeue line: ${JSON.stringify(line)}`);
  const [jobId, state, reason, nodeList, left, end] = parts as [string, string, string, string, string, string];
  if (!/^\d+$/.test(jobId.trim())) throw new Error(`unexpected squeue job id: ${JSON.stringify(line)}`);
  return {
    jobId: jobId.trim(),
    state: state.trim().split(/\s+/)[0] as JobState,
    reason: reason.trim(),
    nodeList: nodeList.trim() === '(null)' ? '' : nodeList.trim(),
    timeLeftSeconds: parseDuration(left.trim()),
    endTime: /^\d{4}-\d\d-\d\dT/.test(end.trim()) ? end.trim() : null,
    name: parts.slice(6).join('|'),
  };
}

export function parseJobLines(stdout: string): JobRow[] {
  return stdout.split('\n').filter((l) => l.trim() !== '').map(parseJobLine);
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
  return stdout.split('\n').map((s) => s.trim()).filter(Boolean);
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

/** enroot/registry output that means the image does not exist (no point retrying). */
export function importErrorIsMissingImage(stderr: string): boolean {
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
