/**
 * The error taxonomy end to end, one row per error class: the kind the class declares, whether the
 * activity interceptor makes its failure non-retryable, how the sweep workflow classifies it (and how
 * a loss ends the allocation), and the CLI's exit code when a command meets it. Adding an error class
 * means adding its row here.
 */
import { describe, expect, it } from 'vitest';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { InfersweepError, InputError, type ErrorKind } from '@infersweep/core';
import { BindError, ConfigError } from '@infersweep/topology';
import * as slurm from '@infersweep/slurm';
import * as agentx from '@infersweep/agentx';
import {
  classify,
  InsufficientTimeError,
  InvalidPlanError,
  lossEnd,
  PlanUnreadableError,
  ProgressStalledError,
  RefusedInputError,
  ServerLostError,
  QuarantineBlocksError,
  TemporalTlsConfigError,
  toFailure,
  type FailureClass,
} from '@infersweep/orchestrator';
import { EXIT, exitCodeFor } from '../src/ops/cli';

type Row = [
  error: InfersweepError,
  kind: ErrorKind,
  retried: boolean,
  workflow: FailureClass,
  exit: number,
  end?: string,
];

const ctx = { jobId: '7', step: 'x' };
const ROWS: Row[] = [
  [new ConfigError('f.yaml', [{ path: 'a', value: '1', message: 'bad' }]), 'fatal', false, 'input', EXIT.usage],
  [new BindError('no address'), 'fatal', false, 'input', EXIT.usage],
  [new InputError('wrong input'), 'fatal', false, 'input', EXIT.usage],
  [new InvalidPlanError('hash mismatch'), 'fatal', false, 'input', EXIT.usage],
  [new RefusedInputError('refused'), 'fatal', false, 'input', EXIT.usage],
  [new slurm.SshHostKeyError('changed key'), 'fatal', false, 'input', EXIT.usage],
  [new slurm.ImageMissingError('no such image'), 'fatal', false, 'input', EXIT.usage],
  [new slurm.SshConnectionError('refused'), 'transient', true, 'failed', EXIT.failure],
  [new slurm.CommandTimeoutError('slow'), 'transient', true, 'failed', EXIT.failure],
  [new slurm.CommandFailedError('rc=1'), 'fatal', false, 'failed', EXIT.failure],
  [new slurm.AllocationError('not granted'), 'transient', true, 'failed', EXIT.failure],
  [new slurm.AllocationError('never fits', { kind: 'fatal' }), 'fatal', false, 'failed', EXIT.failure],
  [
    new slurm.AllocationLostError('NODE_FAIL', { state: 'NODE_FAIL', reason: 'x', context: ctx }),
    'loss',
    false,
    'loss',
    EXIT.failure,
    'NODE_FAIL',
  ],
  [new slurm.StepLaunchError('srun failed'), 'transient', true, 'failed', EXIT.failure],
  [new slurm.ImageLockTimeout('locked'), 'transient', true, 'failed', EXIT.failure],
  [new slurm.ImageImportError('enroot failed'), 'transient', true, 'failed', EXIT.failure],
  [new slurm.CommandAbortedError('aborted'), 'fatal', false, 'failed', EXIT.failure],
  [new slurm.SetupError('enroot', 'enroot: command not found'), 'fatal', false, 'failed', EXIT.failure],
  [new agentx.DrainTimeout('slow drain'), 'transient', true, 'failed', EXIT.failure],
  [new agentx.ScrapeError('refused'), 'transient', true, 'failed', EXIT.failure],
  [new agentx.MetricMissingError('no family'), 'fatal', false, 'failed', EXIT.failure],
  [new agentx.IdleRankError('idle rank 1', [1]), 'fatal', false, 'failed', EXIT.failure],
  [new agentx.ReadinessError('503', 'not-ready'), 'transient', true, 'failed', EXIT.failure],
  [new agentx.ReadinessError('model missing', 'failed'), 'fatal', false, 'failed', EXIT.failure],
  [new agentx.PointAbortedError('cancelled'), 'fatal', false, 'failed', EXIT.failure],
  [new agentx.TraceFormatError('bad trace'), 'fatal', false, 'failed', EXIT.failure],
  [new agentx.AiperfError('exit 1', 'transient'), 'transient', true, 'failed', EXIT.failure],
  [new agentx.RecordInvalidError(['no requests'], null), 'fatal', false, 'failed', EXIT.failure],
  [new agentx.BodyTooLargeError('GET /metrics', 1024), 'transient', true, 'failed', EXIT.failure],
  [new agentx.ClientProcessError('client process killed'), 'transient', true, 'failed', EXIT.failure],
  [new PlanUnreadableError('EIO', ctx), 'transient', true, 'failed', EXIT.failure],
  [new ServerLostError('server exited', ctx), 'loss', false, 'loss', EXIT.failure, 'server-lost'],
  [new InsufficientTimeError('no time', ctx), 'loss', false, 'loss', EXIT.failure, 'insufficient-time'],
  [new ProgressStalledError('stalled', 'drain'), 'transient', true, 'failed', EXIT.failure],
  [
    new QuarantineBlocksError('the quarantine leaves 1 of 4 nodes', { step: 'allocate', node: 'node1' }),
    'fatal',
    false,
    'failed',
    EXIT.failure,
  ],
  [new TemporalTlsConfigError('TEMPORAL_TLS_CERT', '/x', 'unreadable'), 'fatal', false, 'failed', EXIT.failure],
];

describe('every error class: kind, activity retry, workflow class, CLI exit code', () => {
  it.each(ROWS.map((r) => [r[0].name, ...r] as const))('%s', (_name, error, kind, retried, workflow, exit, end) => {
    expect(error.kind).toBe(kind);
    const failure = toFailure(error) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.nonRetryable).toBe(!retried);
    const seen = classify(
      new ActivityFailure('activity failed', 'runPoint', '1', RetryState.NON_RETRYABLE_FAILURE, 'w', failure),
    );
    expect(seen.class).toBe(workflow);
    expect(seen.activity).toBe('runPoint');
    expect(workflow === 'loss' ? lossEnd(seen) : undefined).toBe(end);
    expect(exitCodeFor(error)).toBe(exit);
  });

  it('the table covers every exported error class of the libraries', () => {
    const exported = [slurm, agentx]
      .flatMap((m) => Object.values(m))
      .filter((v): v is typeof InfersweepError => typeof v === 'function' && v.prototype instanceof InfersweepError)
      .map((c) => c.name);
    const covered = new Set(ROWS.map((r) => r[0].constructor.name));
    expect(exported.filter((n) => !covered.has(n))).toEqual([]);
  });
});
