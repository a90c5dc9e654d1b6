/**
 * `infersweep schedule create|list|describe|pause|unpause|trigger|delete`: nightly sweeps as
 * Temporal Schedules. The action starts `sweepAllWorkflow` (for one orientation too) with the
 * plan resolved and frozen at creation; `perRun` gives every run its own sweep ids and results
 * folders. Policies: overlap SKIP (a run still going makes the next one skip), an explicit
 * catchup window, pause on failure. Config edits need `schedule delete` + `schedule create`.
 */
import type { Command } from 'commander';
import { DEFAULT_CLUSTER, DEFAULT_CONFIG } from '@infersweep/core';
import { action, usageExits } from '../ops/cli';
import type { CreateOpts, SimpleVerb } from '../actions/schedule';

/** Register `schedule pause|unpause|trigger|delete <name>` (../actions/schedule.ts `simpleVerb`). */
function registerSimple(schedule: Command, verb: SimpleVerb, desc: string): void {
  usageExits(
    schedule
      .command(verb)
      .description(desc)
      .argument('<name>', 'schedule name')
      .option('--note <text>', 'note (pause/unpause)')
      .action(
        action(`schedule ${verb}`, async (name: string, opts: { note?: string }) =>
          (await import('../actions/schedule')).simpleVerb(verb, name, opts),
        ),
      ),
  );
}

export function register(program: Command): void {
  const schedule = usageExits(
    program
      .command('schedule')
      .description('Nightly sweeps as Temporal Schedules (plan frozen at creation)')
      .addHelpText(
        'after',
        `
Example:
  infersweep schedule create nightly --cron "0 2 * * *" --orientation all
  infersweep schedule describe nightly
  infersweep schedule trigger nightly        # run once now`,
      ),
  );
  usageExits(
    schedule
      .command('create')
      .description('Create a schedule: plans now (frozen), starts a sweep of them on every cron tick')
      .argument('<name>', 'schedule name (id infersweep-<name>)')
      .requiredOption('--cron <expr>', 'cron expression, e.g. "0 2 * * *" (02:00 daily)')
      .requiredOption('-o, --orientation <name>', 'orientation, or "all"')
      .option('-c, --config <file>', 'sweep config', DEFAULT_CONFIG)
      .option('--cluster <profile>', 'cluster profile', DEFAULT_CLUSTER)
      .option('--points <list>', 'only these concurrency points, e.g. 16,32')
      .option('--timezone <tz>', 'IANA time zone of the cron expression', 'UTC')
      .option('--catchup-window <duration>', 'how late a missed run (server down) may still start', '1 hour')
      .option('--paused', 'create paused')
      .option('--note <text>', 'note shown with the schedule')
      .option(
        '--task-queue <name>',
        'task queue of the started sweeps (default infersweep-<cluster>; match `worker:serve --task-queue`)',
      )
      .option('--json', 'print one JSON object')
      .action(
        action('schedule create', async (name: string, opts: CreateOpts) =>
          (await import('../actions/schedule')).createSchedule(name, opts),
        ),
      ),
  );
  usageExits(
    schedule
      .command('list')
      .description('List schedules')
      .option('--json', 'print a JSON array')
      .action(
        action('schedule list', async (opts: { json?: boolean }) =>
          (await import('../actions/schedule')).listAll(opts),
        ),
      ),
  );
  usageExits(
    schedule
      .command('describe')
      .description('Show a schedule: frozen plan, policies, next and recent runs')
      .argument('<name>', 'schedule name')
      .option('--json', 'print one JSON object')
      .action(
        action('schedule describe', async (name: string, opts: { json?: boolean }) =>
          (await import('../actions/schedule')).describeSchedule(name, opts),
        ),
      ),
  );
  const simple = (verb: SimpleVerb, desc: string) => registerSimple(schedule, verb, desc);
  simple('pause', 'Pause a schedule');
  simple('unpause', 'Unpause a schedule');
  simple('trigger', 'Start one run now (overlap policy applies)');
  simple('delete', 'Delete a schedule (running sweeps continue)');
}
