/**
 * The one error shape every infersweep layer throws. Activities turn these into Temporal
 * ApplicationFailures with `type = name` and `nonRetryable = !retryable`, so the decision
 * "retry or not" is made here, where the failure is understood, not by string matching later.
 */
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

export class InfersweepError extends Error {
  readonly retryable: boolean;
  readonly context: ErrorContext;

  constructor(message: string, opts: { retryable: boolean; context?: ErrorContext; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.retryable = opts.retryable;
    this.context = opts.context ?? {};
  }

  /** A plain, JSON-safe view (for activity failure details and logs). */
  toJSON(): { name: string; message: string; retryable: boolean; context: ErrorContext } {
    return { name: this.name, message: this.message, retryable: this.retryable, context: this.context };
  }
}

/** Keep the last `lines` lines of a log/stderr for error context. */
export function tail(text: string, lines = 20): string {
  const all = text.replace(/\s+$/, '').split('\n');
  return all.slice(-lines).join('\n');
}
