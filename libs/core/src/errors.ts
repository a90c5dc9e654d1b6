import type { AllocationEnd } from './allocation';

/**
 * The one error shape every infersweep layer throws. Each error has one `kind`, decided where the
 * failure is understood, and the orchestrator maps it to a Temporal ApplicationFailure in one
 * place (libs/orchestrator's activity interceptor), never by string matching later:
 *  - `transient`: retrying the same call may succeed (a dropped SSH connection, a slow drain);
 *  - `fatal`: retrying cannot help (a wrong config, a missing image, a pinned host key mismatch);
 *  - `loss`: the allocation or the server went away under us: the workflow cleans up, allocates
 *    again and resumes at the first unfinished point (never retried in place).
 */
export type ErrorKind = 'transient' | 'fatal' | 'loss';

export interface ErrorContext {
  /** Slurm job id, when an allocation is involved. */
  jobId?: string;
  /** Node name (e.g. node2) the failure happened on. */
  node?: string;
  /** The step of the sweep: allocate, launch, readiness, point:c=16, drain, release, … */
  step?: string;
  /** The last lines of the relevant log or stderr. */
  logTail?: string;
  /** Anything else worth showing an operator. */
  [key: string]: unknown;
}

/** Every error class says its kind in its constructor (and may let its caller choose, e.g. a permanent allocation refusal). */
export interface ErrorKindOption {
  kind: ErrorKind;
}

export class InfersweepError extends Error {
  readonly kind: ErrorKind;
  readonly context: ErrorContext;

  constructor(message: string, opts: ErrorKindOption & { context?: ErrorContext; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.kind = opts.kind;
    this.context = opts.context ?? {};
  }

  get jobId(): string | undefined {
    return this.context.jobId;
  }
  get node(): string | undefined {
    return this.context.node;
  }
  get step(): string | undefined {
    return this.context.step;
  }
  get logTail(): string | undefined {
    return this.context.logTail;
  }

  /** A plain, JSON-safe view (for activity failure details and logs). */
  toJSON(): { name: string; message: string; kind: ErrorKind; context: ErrorContext } {
    return { name: this.name, message: this.message, kind: this.kind, context: this.context };
  }
}

/**
 * What broke in a failed attempt (./attempt-class.ts decides it from the failure's Slurm state, log
 * tail and error class; libs/sweep/src/attempt-decision.ts what the sweep does about it):
 *  - `image`: the container image could not be imported or pulled (enroot, pyxis);
 *  - `network`: DNS or a connection (the registry, the login node, a peer);
 *  - `nccl`: NCCL, RDMA or GPU peer memory between the ranks;
 *  - `cuda-oom`: the engine ran out of GPU memory (at this concurrency);
 *  - `host-oom`: Slurm's cgroup killed the step for host memory (OUT_OF_MEMORY);
 *  - `engine-crash`: the engine exited (an exit code, a signal) for no reason a log line names;
 *  - `node-health`: the node failed (NODE_FAIL, BOOT_FAIL, a GPU Xid);
 *  - `scheduler`: Slurm ended the job (time limit, preemption, a cancel by someone else);
 *  - `zero-output`: the point "succeeded" with no output tokens (no measurement);
 *  - `client`: the load client itself failed;
 *  - `setup`: a program the plan runs is not on the cluster (a SetupError: exit 127, "command not found");
 *  - `unknown`: no rule matched.
 */
export const ATTEMPT_CLASSES = [
  'image',
  'network',
  'nccl',
  'cuda-oom',
  'host-oom',
  'engine-crash',
  'node-health',
  'scheduler',
  'zero-output',
  'client',
  'setup',
  'unknown',
] as const;
export type AttemptClass = (typeof ATTEMPT_CLASSES)[number];

/** The class of a failed attempt, the rule that decided it, the line it matched and the node(s) it implicates. */
export interface AttemptClassification {
  class: AttemptClass;
  /** the rule's id (./attempt-class.ts ATTEMPT_RULES); `unknown` when none matched */
  rule: string;
  /** the matched state, error class or log line (one line, at most 300 characters) */
  evidence?: string;
  /** the nodes the failure names when the rule implicates them (empty otherwise) */
  nodes: string[];
}

/**
 * What a failed activity carries to the workflow (ApplicationFailure details[0]): the error's
 * context plus its kind, and `input: true` for an {@link InputError}.
 */
export interface FailureDetails extends ErrorContext {
  kind: ErrorKind;
  input: boolean;
  /** For a `loss` that is not a Slurm state: how the allocation ended (the time guard, a lost server). */
  end?: AllocationEnd;
  /** What broke, classified where the failure happened (the activity interceptor, ./attempt-class.ts). */
  attempt?: AttemptClassification;
}

/**
 * The sweep's input is wrong (config, plan, site profile, a pinned host key, an image that does not
 * exist): `fatal`, and more: no allocation or point attempt can help, so the workflow fails the sweep
 * at once instead of spending allocation attempts (the interceptor marks the failure `input: true`).
 */
export class InputError extends InfersweepError {
  constructor(message: string, opts: { context?: ErrorContext; cause?: unknown } = {}) {
    super(message, { kind: 'fatal', ...opts });
  }
}

/**
 * The cluster cannot take work now: its login host does not answer (the SSH connection is refused or
 * times out) or the partition the plan names is down or inactive. Transient: the activity's own
 * retries try again. A sweep whose spent allocation attempts all found the cluster unavailable fails
 * with this type ({@link CLUSTER_UNAVAILABLE}), and a snapshot (libs/sweep/src/snapshot.ts) delays
 * the cell on a timer instead of spending its attempts.
 */
export class ClusterUnavailableError extends InfersweepError {
  constructor(message: string, opts: { context?: ErrorContext; cause?: unknown; kind?: ErrorKind } = {}) {
    super(message, { kind: opts.kind ?? 'transient', context: opts.context, cause: opts.cause });
  }
}

/** The failure type (ApplicationFailure type = error class name) of {@link ClusterUnavailableError}. */
export const CLUSTER_UNAVAILABLE = 'ClusterUnavailableError';

/** Keep the last `lines` lines of a log/stderr for error context. */
export function tail(text: string, lines = 20): string {
  const all = text.replace(/\s+$/, '').split('\n');
  return all.slice(-lines).join('\n');
}
