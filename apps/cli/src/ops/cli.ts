/**
 * What every operational command shares: exit codes, usage errors that name the bad value and the
 * fix, an action wrapper that maps errors to exit codes, and plain-vs-TTY output.
 */
import type { Command, CommanderError } from 'commander';
import { InputError } from '@infersweep/core';

/** Documented in README (CLI section) and in every command's --help. */
export const EXIT = {
  ok: 0,
  /** an operation failed (Temporal/Slurm unreachable, sweep not found, …) */
  failure: 1,
  /** bad arguments or an invalid config: nothing was started */
  usage: 2,
  /** the sweep ended failed, cancelled or aborted, or with invalid/failed points */
  sweepFailed: 3,
  /** Ctrl-C: detached from a sweep that keeps running */
  detached: 130,
} as const;

export const EXIT_CODES_HELP = `
Exit codes:
  0    success
  1    failure (Temporal or Slurm unreachable, sweep not found, operation refused)
  2    usage error or invalid config (nothing was started)
  3    the sweep ended failed, cancelled or aborted, or has invalid/failed points
  130  detached with Ctrl-C (the sweep keeps running)`;

/** A bad argument: message names the value and suggests the fix. Exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command ran but reports a bad outcome with a given exit code (message already printed). */
export class ExitWith extends Error {
  constructor(
    readonly code: number,
    message = '',
  ) {
    super(message);
    this.name = 'ExitWith';
  }
}

export const isTTY = (): boolean => process.stdout.isTTY === true && process.env.INFERSWEEP_PLAIN !== '1';

export function out(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function err(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Commander's own usage errors (unknown option, missing argument) exit 2, help exits 0. */
export function usageExits(cmd: Command): Command {
  cmd.showHelpAfterError('(add --help for usage)');
  cmd.exitOverride((e: CommanderError) => {
    process.exit(
      e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : EXIT.usage,
    );
  });
  cmd.addHelpText('after', EXIT_CODES_HELP);
  return cmd;
}

/** Exit code for an error thrown out of an action. */
export function exitCodeFor(e: unknown): number {
  if (e instanceof ExitWith) return e.code;
  if (e instanceof UsageError) return EXIT.usage;
  // the sweep's input is wrong (ConfigError, BindError, InvalidPlanError, a pinned host key, a missing image): nothing started
  if (e instanceof InputError) return EXIT.usage;
  return EXIT.failure;
}

export function errorMessage(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const grpc = e as Error & { code?: number; details?: string };
  if (grpc.code === 14 || /UNAVAILABLE|ECONNREFUSED|connect/.test(e.message)) {
    return `${e.message}\n  (is Temporal up? for the local stack run \`npx nx run cli:stack -- up\`; for a deployed cluster set TEMPORAL_ADDRESS)`;
  }
  return e.message;
}

/**
 * Wrap an action: run it, print errors as `infersweep <cmd>: message`, exit with the mapped code.
 * Exits explicitly (open gRPC channels and native workers would otherwise keep the process alive).
 */
export function action<A extends unknown[]>(
  name: string,
  fn: (...args: A) => Promise<number | void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    let code: number = EXIT.ok;
    try {
      code = (await fn(...args)) ?? EXIT.ok;
    } catch (e) {
      code = exitCodeFor(e);
      const msg = e instanceof ExitWith ? e.message : errorMessage(e);
      if (msg) err(`infersweep ${name}: ${msg.includes('\n') && !(e instanceof ExitWith) ? `\n${msg}` : msg}`);
      if (process.env.INFERSWEEP_DEBUG && e instanceof Error && e.stack) err(e.stack);
    }
    await new Promise<void>((r) => process.stdout.write('', () => r()));
    process.exit(code);
  };
}

/** Parse `16,32` into positive integers or throw a UsageError naming the value. */
export function parsePointList(text: string, flag = '--points'): number[] {
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const nums = parts.map(Number);
  if (parts.length === 0 || nums.some((x) => !Number.isInteger(x) || x <= 0)) {
    throw new UsageError(
      `${flag} ${JSON.stringify(text)}: expected a comma-separated list of positive integers, e.g. ${flag} 16,32`,
    );
  }
  return nums;
}

export function parsePositiveInt(text: string, flag: string): number {
  const v = Number(text);
  if (!Number.isInteger(v) || v <= 0)
    throw new UsageError(`${flag} ${JSON.stringify(text)}: expected a positive integer, e.g. ${flag} 16`);
  return v;
}

export function fmtDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
