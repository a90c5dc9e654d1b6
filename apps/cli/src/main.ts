#!/usr/bin/env -S npx tsx
/**
 * `infersweep` CLI. Every file in ./commands exports `register(program)`; the list below is the
 * whole command set, registered statically (a new subcommand is one import and one entry). A
 * command file holds only its name, arguments, options and help, and imports nothing heavy: its
 * action imports ../actions/<command>.ts (and with it Temporal, the orchestrator, the history…)
 * when it runs, so `--help`, a usage error or one command loads only what that command needs.
 */
import { Command } from 'commander';
import * as cancel from './commands/cancel';
import * as compare from './commands/compare';
import * as history from './commands/history';
import * as janitor from './commands/janitor';
import * as list from './commands/list';
import * as logs from './commands/logs';
import * as nodes from './commands/nodes';
import * as plan from './commands/plan';
import * as report from './commands/report';
import * as results from './commands/results';
import * as resume from './commands/resume';
import * as schedule from './commands/schedule';
import * as skip from './commands/skip';
import * as snapshot from './commands/snapshot';
import * as stack from './commands/stack';
import * as status from './commands/status';
import * as sweep from './commands/sweep';
import * as watch from './commands/watch';

const COMMANDS: { register(program: Command): void }[] = [
  cancel,
  compare,
  history,
  janitor,
  list,
  logs,
  nodes,
  plan,
  report,
  results,
  resume,
  schedule,
  skip,
  snapshot,
  stack,
  status,
  sweep,
  watch,
];

export function buildProgram(): Command {
  const program = new Command('infersweep')
    .description('Durable multi-node LLM-inference benchmark sweeps on Slurm')
    .showHelpAfterError()
    .exitOverride((err) => process.exit(err.exitCode));
  for (const c of COMMANDS) c.register(program);
  return program;
}

buildProgram()
  .parseAsync(process.argv)
  .catch((e: unknown) => {
    process.stderr.write(`infersweep: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
