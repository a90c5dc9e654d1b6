/**
 * `infersweep schedule create|list|describe|pause|unpause|trigger|delete`: nightly sweeps as
 * Temporal Schedules. The action starts `sweepAllWorkflow` (for one orientation too) with the
 * plan resolved and frozen at creation; `perRun` gives every run its own sweep ids and results
 * folders. Policies: overlap SKIP (a run still going makes the next one skip), an explicit
 * catchup window, pause on failure. Config edits need `schedule delete` + `schedule create`.
 */
import type { Command } from 'commander';
import { join } from 'node:path';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { SweepPlan } from '@infersweep/topology';
import { buildSweepInput, dataDir } from '@infersweep/orchestrator';
import { searchAttributeKeys, type SweepAllInput } from '@infersweep/sweep';
import { SWEEP_ALL_WORKFLOW_TYPE, taskQueueFor } from '@infersweep/core';
import { DEFAULT_CLUSTER, DEFAULT_CONFIG } from '@infersweep/orchestrator';
import { plansToStart } from '../ops/plans';
import { action, out, usageExits, EXIT, ExitWith, UsageError } from '../ops/cli';
import { withSession } from '../ops/temporal';

export const SCHEDULE_PREFIX = 'infersweep-';

/** `nightly` → `infersweep-nightly` (a full id is kept). */
export function scheduleIdOf(name: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(name))
    throw new UsageError(
      `schedule name ${JSON.stringify(name)}: use letters, digits, '.', '_' and '-', e.g. nightly-balanced`,
    );
  return name.startsWith(SCHEDULE_PREFIX) ? name : `${SCHEDULE_PREFIX}${name}`;
}

/** A 5-field cron check with a useful message (Temporal checks the ranges). */
export function checkCron(expr: string): string {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5 && !expr.trim().startsWith('@')) {
    throw new UsageError(
      `--cron ${JSON.stringify(expr)}: expected 5 fields "minute hour day-of-month month day-of-week", e.g. --cron "0 2 * * *" (02:00 every day)`,
    );
  }
  return expr.trim();
}

interface CreateOpts {
  cron: string;
  orientation: string;
  config: string;
  cluster: string;
  points?: string;
  timezone: string;
  catchupWindow: string;
  paused?: boolean;
  note?: string;
  json?: boolean;
  taskQueue?: string;
}

/**
 * The frozen action input: every orientation's plan, results under `<data>/results/<run id>-<orientation>`,
 * and the schedule's id: each run is a night of that schedule, judged as one family (docs/history.md).
 */
export function scheduledInput(plans: SweepPlan[], name: string, configHash: string): SweepAllInput {
  const label = `schedule-${name}`;
  const sweeps = plans.map((p) => buildSweepInput(p, { configName: p.sweep, configHash, label }));
  // each run's results under the cluster's results root (shared storage the worker sees), if it has one
  const perRun = { resultsRoot: plans[0]?.resultsRoot ?? join(dataDir, 'results') };
  return { sweeps, maxConcurrentSweeps: 1, perRun, schedule: scheduleIdOf(name) };
}

async function create(client: Client, name: string, opts: CreateOpts): Promise<void> {
  const scheduleId = scheduleIdOf(name);
  const cron = checkCron(opts.cron);
  const { plans, configHash } = plansToStart(opts);
  const input = scheduledInput(plans, name, configHash);
  const first = input.sweeps[0]!;
  try {
    await client.schedule.create({
      scheduleId,
      spec: { cronExpressions: [cron], timezone: opts.timezone },
      action: {
        type: 'startWorkflow',
        workflowType: SWEEP_ALL_WORKFLOW_TYPE,
        taskQueue: opts.taskQueue ?? taskQueueFor(opts.cluster),
        // Temporal appends the run's scheduled time: infersweep-sched-<name>-2026-01-02T02:00:00Z
        workflowId: `${SCHEDULE_PREFIX}sched-${name}`,
        args: [input],
        typedSearchAttributes: [
          { key: searchAttributeKeys.orientation, value: opts.orientation === 'all' ? 'all' : first.orientation },
          { key: searchAttributeKeys.model, value: first.model },
          { key: searchAttributeKeys.cluster, value: first.cluster },
          { key: searchAttributeKeys.config, value: first.configName },
          { key: searchAttributeKeys.status, value: 'scheduled' },
        ],
        memo: {
          schedule: scheduleId,
          configHash,
          planHashes: Object.fromEntries(input.sweeps.map((s) => [s.orientation, s.planHash])),
        },
        staticSummary: `scheduled (${scheduleId}): ${input.sweeps.map((s) => s.orientation).join(', ')} of ${first.model} on ${first.cluster}`,
      },
      policies: { overlap: 'SKIP', catchupWindow: opts.catchupWindow as never, pauseOnFailure: true },
      state: {
        paused: !!opts.paused,
        note: opts.note ?? `created by infersweep from ${opts.config} (config ${configHash}); plan frozen at creation`,
      },
      memo: { configFile: opts.config, configHash, orientation: opts.orientation, cluster: opts.cluster },
    });
  } catch (e) {
    throw createRefusal(e, name, cron, opts);
  }
  const d = await client.schedule.getHandle(scheduleId).describe();
  if (opts.json) {
    out(
      JSON.stringify({
        scheduleId,
        cron,
        orientations: input.sweeps.map((s) => s.orientation),
        nextActionTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
        paused: d.state.paused,
      }),
    );
    return;
  }
  out(
    `schedule ${scheduleId} created: "${cron}" (${opts.timezone}) → ${input.sweeps.map((s) => s.orientation).join(', ')} on ${first.cluster}`,
  );
  out(
    `  next runs   ${
      d.info.nextActionTimes
        .slice(0, 3)
        .map((t) => t.toISOString())
        .join(', ') || '(paused)'
    }`,
  );
  out(`  policies    overlap SKIP, catchup window ${opts.catchupWindow}, pause on failure`);
  out(
    `  the plan is frozen now (config ${configHash}); after editing ${opts.config}, run \`schedule delete ${name}\` and \`schedule create\` again`,
  );
  out(
    `  a worker must poll ${opts.taskQueue ?? taskQueueFor(first.cluster)} when it fires: \`npx nx run worker:serve -- --cluster ${first.cluster}\``,
  );
}

/** What a refused schedule create means to the user: the schedule exists, or Temporal refused an argument. */
function createRefusal(e: unknown, name: string, cron: string, opts: CreateOpts): unknown {
  const scheduleId = scheduleIdOf(name);
  if (e instanceof ScheduleAlreadyRunning)
    return new ExitWith(
      EXIT.failure,
      `schedule ${scheduleId} already exists; \`infersweep schedule delete ${name}\` first (or choose another name)`,
    );
  const g = e as { code?: number; details?: string; message: string };
  // INVALID_ARGUMENT arrives as a TypeError from the schedule client (rethrowGrpcError)
  if (g.code === 3 || e instanceof TypeError)
    return new UsageError(
      `Temporal refused the schedule: ${g.details ?? g.message} (check --cron ${JSON.stringify(cron)}, --timezone ${opts.timezone}, --catchup-window ${opts.catchupWindow})`,
    );
  return e;
}

async function describeText(client: Client, name: string, json?: boolean): Promise<void> {
  const id = scheduleIdOf(name);
  const d = await client.schedule.getHandle(id).describe();
  const action = d.action;
  const input = (action.args?.[0] ?? {}) as Partial<SweepAllInput>;
  const view = {
    scheduleId: d.scheduleId,
    paused: d.state.paused,
    note: d.state.note,
    spec: d.spec,
    workflowType: action.workflowType,
    workflowIdPrefix: action.workflowId,
    taskQueue: action.taskQueue,
    orientations: (input.sweeps ?? []).map((s) => ({
      orientation: s.orientation,
      points: s.points,
      planHash: s.planHash,
    })),
    policies: d.policies,
    nextActionTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
    recentActions: d.info.recentActions.map((a) => ({
      scheduledAt: a.scheduledAt.toISOString(),
      takenAt: a.takenAt.toISOString(),
      workflowId: a.action.workflow.workflowId,
    })),
    runningActions: d.info.runningActions.map((a) => a.workflow.workflowId),
    memo: d.memo,
  };
  if (json) {
    out(JSON.stringify(view, null, 2));
    return;
  }
  out(`${view.scheduleId}  ${view.paused ? 'PAUSED' : 'active'}${view.note ? `  (${view.note})` : ''}`);
  out(`  action      ${view.workflowType} on ${view.taskQueue}, workflow id ${view.workflowIdPrefix}-<time>`);
  out(
    `  frozen plan ${view.orientations.map((o) => `${o.orientation} c=${o.points.join(',')} (plan ${o.planHash})`).join('; ')}`,
  );
  out(
    `  policies    overlap ${view.policies.overlap}, catchup window ${Math.round(view.policies.catchupWindow / 1000)} s, pause on failure ${view.policies.pauseOnFailure}`,
  );
  out(`  next runs   ${view.nextActionTimes.slice(0, 3).join(', ') || '–'}`);
  out(`  running     ${view.runningActions.join(', ') || '–'}`);
  out(`  recent      ${view.recentActions.map((a) => `${a.workflowId} (${a.takenAt})`).join(', ') || '–'}`);
}

const notFound = (name: string) => (e: unknown) => {
  if (e instanceof ScheduleNotFoundError)
    throw new ExitWith(EXIT.failure, `no schedule ${scheduleIdOf(name)}; see \`infersweep schedule list\``);
  throw e;
};

async function listSchedules(client: Client, json?: boolean): Promise<void> {
  const rows: { scheduleId: string; paused: boolean; next?: string; workflowType?: string; recent?: string }[] = [];
  for await (const sc of client.schedule.list()) {
    rows.push({
      scheduleId: sc.scheduleId,
      paused: sc.state.paused,
      next: sc.info.nextActionTimes[0]?.toISOString(),
      workflowType: sc.action?.workflowType,
      recent: sc.info.recentActions.at(-1)?.action.workflow.workflowId,
    });
  }
  if (json) return out(JSON.stringify(rows, null, 2));
  if (rows.length === 0)
    return out('no schedules; create one with `infersweep schedule create NAME --cron "0 2 * * *" --orientation all`');
  for (const r of rows)
    out(`${r.scheduleId.padEnd(32)} ${r.paused ? 'PAUSED' : 'active'}  next ${r.next ?? '–'}  last ${r.recent ?? '–'}`);
}

type SimpleVerb = 'pause' | 'unpause' | 'trigger' | 'delete';

const SIMPLE_DONE: Record<SimpleVerb, (id: string) => string> = {
  pause: (id) => `schedule ${id} paused`,
  unpause: (id) => `schedule ${id} active again`,
  trigger: (id) =>
    `schedule ${id} triggered: a run starts now (skipped if one is still running); see \`infersweep list --running\``,
  delete: (id) => `schedule ${id} deleted (sweeps it started are not affected)`,
};

/** `schedule pause|unpause|trigger|delete <name>`: one call on the schedule's handle. */
function registerSimple(schedule: Command, verb: SimpleVerb, desc: string): void {
  usageExits(
    schedule
      .command(verb)
      .description(desc)
      .argument('<name>', 'schedule name')
      .option('--note <text>', 'note (pause/unpause)')
      .action(
        action(`schedule ${verb}`, async (name: string, opts: { note?: string }) =>
          withSession(async (s) => {
            const h = s.client.schedule.getHandle(scheduleIdOf(name));
            const run = async () => {
              if (verb === 'pause') await h.pause(opts.note ?? 'paused from the infersweep CLI');
              else if (verb === 'unpause') await h.unpause(opts.note ?? 'unpaused from the infersweep CLI');
              else if (verb === 'trigger') await h.trigger();
              else await h.delete();
            };
            await run().catch(notFound(name));
            out(SIMPLE_DONE[verb](h.scheduleId));
          }),
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
          withSession((s) => create(s.client, name, opts)),
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
          withSession((s) => listSchedules(s.client, opts.json)),
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
          withSession((s) => describeText(s.client, name, opts.json).catch(notFound(name))),
        ),
      ),
  );
  const simple = (verb: SimpleVerb, desc: string) => registerSimple(schedule, verb, desc);
  simple('pause', 'Pause a schedule');
  simple('unpause', 'Unpause a schedule');
  simple('trigger', 'Start one run now (overlap policy applies)');
  simple('delete', 'Delete a schedule (running sweeps continue)');
}
