import { InfersweepError, InputError, type ErrorContext, type ErrorKind } from '@infersweep/core';

type Opts = { context?: ErrorContext; cause?: unknown };

/** The host key offered by the server is unknown or differs from the pinned one. Never retried. */
export class SshHostKeyError extends InputError {
  constructor(message: string, opts: Opts = {}) {
    super(message, opts);
  }
}

/** Could not connect, or the connection dropped (transient: reconnecting may work). */
export class SshConnectionError extends InfersweepError {
  constructor(message: string, opts: Opts = {}) {
    super(message, { ...opts, kind: 'transient' });
  }
}

/** A command ran past its per-command timeout (its process group was killed). */
export class CommandTimeoutError extends InfersweepError {
  constructor(message: string, opts: Opts & { kind?: ErrorKind } = {}) {
    super(message, { kind: opts.kind ?? 'transient', context: opts.context, cause: opts.cause });
  }
}

/** A command exited non-zero where success was required. */
export class CommandFailedError extends InfersweepError {
  constructor(message: string, opts: Opts & { kind?: ErrorKind } = {}) {
    super(message, { kind: opts.kind ?? 'fatal', context: opts.context, cause: opts.cause });
  }
}

/** The allocation was not granted (timeout, rejected request). Transient unless the request can never fit. */
export class AllocationError extends InfersweepError {
  constructor(message: string, opts: Opts & { kind?: ErrorKind } = {}) {
    super(message, { kind: opts.kind ?? 'transient', context: opts.context, cause: opts.cause });
  }
}

/** The allocation we were running in ended under us: TIMEOUT, NODE_FAIL, CANCELLED, GONE, … (a loss: the workflow re-allocates) */
export class AllocationLostError extends InfersweepError {
  readonly state: string;
  readonly reason: string;
  constructor(message: string, opts: Opts & { state: string; reason: string }) {
    super(message, {
      kind: 'loss',
      context: { ...opts.context, state: opts.state, reason: opts.reason },
      cause: opts.cause,
    });
    this.state = opts.state;
    this.reason = opts.reason;
  }
}

/** srun could not be started for a step. */
export class StepLaunchError extends InfersweepError {
  constructor(message: string, opts: Opts & { kind?: ErrorKind } = {}) {
    super(message, { kind: opts.kind ?? 'transient', context: opts.context, cause: opts.cause });
  }
}

/** The per-image lock was not acquired within its timeout (another import is still running). */
export class ImageLockTimeout extends InfersweepError {
  constructor(message: string, opts: Opts = {}) {
    super(message, { ...opts, kind: 'transient' });
  }
}

/** The import command failed or produced an invalid squash file. */
export class ImageImportError extends InfersweepError {
  constructor(message: string, opts: Opts & { kind?: ErrorKind } = {}) {
    super(message, { kind: opts.kind ?? 'transient', context: opts.context, cause: opts.cause });
  }
}

/** The image does not exist (registry says so): retrying will not help. */
export class ImageMissingError extends InputError {
  constructor(message: string, opts: Opts = {}) {
    super(message, opts);
  }
}

/** The caller aborted the command (AbortSignal); its process group was killed. */
export class CommandAbortedError extends InfersweepError {
  constructor(message: string, opts: Opts = {}) {
    super(message, { ...opts, kind: 'fatal' });
  }
}

/**
 * A tool the cluster must provide is missing on the login node or a compute node (exit 127,
 * "command not found", execve ENOENT): enroot, srun, the engine binary, … Never retried: the
 * site's set-up (PATH, modules, installed packages) has to change. The message names the tool.
 */
export class SetupError extends InfersweepError {
  readonly tool: string;
  constructor(tool: string, message: string, opts: Opts = {}) {
    super(message, { ...opts, kind: 'fatal', context: { ...opts.context, tool } });
    this.tool = tool;
  }
}
