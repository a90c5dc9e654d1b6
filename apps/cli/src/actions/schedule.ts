/** What `infersweep schedule …` runs (its options are in ../commands/schedule.ts). */
import { join } from 'node:path';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { SweepPlan } from '@infersweep/topology';
import { buildSweepInput, dataDir } from '@infersweep/orchestrator';
import { searchAttributeKeys, type SweepAllInput } from '@infersweep/sweep';
import { SWEEP_ALL_WORKFLOW_TYPE, taskQueueFor } from '@infersweep/core';
import { plansToStart } from '../ops/plans';
import { out, EXIT, ExitWith, UsageError } from '../ops/cli';
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

export interface CreateOpts {
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

export type SimpleVerb = 'pause' | 'unpause' | 'trigger' | 'delete';

const SIMPLE_DONE: Record<SimpleVerb, (id: string) => string> = {
  pause: (id) => `schedule ${id} paused`,
  unpause: (id) => `schedule ${id} active again`,
  trigger: (id) =>
    `schedule ${id} triggered: a run starts now (skipped if one is still running); see \`infersweep list --running\``,
  delete: (id) => `schedule ${id} deleted (sweeps it started are not affected)`,
};

/** `schedule pause|unpause|trigger|delete <name>`: one call on the schedule's handle. */
export async function simpleVerb(verb: SimpleVerb, name: string, opts: { note?: string }): Promise<void> {
  return withSession(async (s) => {
    const h = s.client.schedule.getHandle(scheduleIdOf(name));
    const run = async () => {
      if (verb === 'pause') await h.pause(opts.note ?? 'paused from the infersweep CLI');
      else if (verb === 'unpause') await h.unpause(opts.note ?? 'unpaused from the infersweep CLI');
      else if (verb === 'trigger') await h.trigger();
      else await h.delete();
    };
    await run().catch(notFound(name));
    out(SIMPLE_DONE[verb](h.scheduleId));
  });
}

export async function createSchedule(name: string, opts: CreateOpts): Promise<void> {
  return withSession((s) => create(s.client, name, opts));
}

export async function listAll(opts: { json?: boolean }): Promise<void> {
  return withSession((s) => listSchedules(s.client, opts.json));
}

export async function describeSchedule(name: string, opts: { json?: boolean }): Promise<void> {
  return withSession((s) => describeText(s.client, name, opts.json).catch(notFound(name)));
}
