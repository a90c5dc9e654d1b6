import { InfersweepError, type ErrorContext, type ErrorKind } from '@infersweep/core';

/**
 * Typed AgentX failures. Each one's `kind` is decided here, where the failure is understood:
 *  - transient conditions of a healthy deployment (a slow drain, a flaky scrape) → `transient`;
 *  - a wrong deployment or input (idle DP rank, missing metric family, bad trace file, wrong model) → `fatal`.
 */
export class DrainTimeout extends InfersweepError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { kind: 'transient', context: { step: 'drain', ...context } });
  }
}

/** A /metrics scrape failed (refused, timeout, non-200). */
export class ScrapeError extends InfersweepError {
  constructor(message: string, context: ErrorContext = {}, cause?: unknown) {
    super(message, { kind: 'transient', context, cause });
  }
}

/** A metric the engine family must expose is absent: the gate cannot decide, so it fails (never "idle"). */
export class MetricMissingError extends InfersweepError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { kind: 'fatal', context });
  }
}

/** A DP engine the plan expects is absent from /metrics or served no request ("idle DP rank i"). */
export class IdleRankError extends InfersweepError {
  readonly missing: number[];
  constructor(message: string, missing: number[], context: ErrorContext = {}) {
    super(message, { kind: 'fatal', context: { ...context, missing } });
    this.missing = missing;
  }
}

/** The deployment is not ready (health refused/503, model not listed). */
export class ReadinessError extends InfersweepError {
  readonly state: 'not-ready' | 'failed';
  constructor(message: string, state: 'not-ready' | 'failed', context: ErrorContext = {}) {
    super(message, { kind: state === 'not-ready' ? 'transient' : 'fatal', context: { step: 'readiness', ...context } });
    this.state = state;
  }
}

/** The run was aborted by its caller (Temporal cancellation): never retried by us. */
export class PointAbortedError extends InfersweepError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { kind: 'fatal', context });
  }
}

/** A trace file does not match the Weka trace schema. */
export class TraceFormatError extends InfersweepError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { kind: 'fatal', context });
  }
}

/** The aiperf process failed or its exports are missing/unparseable. */
export class AiperfError extends InfersweepError {
  constructor(message: string, kind: ErrorKind, context: ErrorContext = {}) {
    super(message, { kind, context });
  }
}

/**
 * A point's record did not validate against its schema: the point is invalid with these reasons
 * (not retried: the same data would fail again); its raw requests and the unvalidated record are kept.
 */
export class RecordInvalidError extends InfersweepError {
  readonly reasons: string[];
  readonly recordPath: string | null;
  constructor(reasons: string[], recordPath: string | null, context: ErrorContext = {}) {
    super(`point record failed validation: ${reasons.join('; ')}`, {
      kind: 'fatal',
      context: { ...context, recordPath },
    });
    this.reasons = reasons;
    this.recordPath = recordPath;
  }
}

/**
 * The point's client process (libs/agentx/src/client-process.ts) ended without a result: it crashed,
 * was killed (out of memory) or could not start. Transient: the point runs again in a new process.
 */
export class ClientProcessError extends InfersweepError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { kind: 'transient', context });
  }
}
