/** What `infersweep sweep` runs (its options are in ../commands/sweep.ts). */
import {
  buildSweepInput,
  defaultLabel,
  startSweep,
  startSweepAll,
  SweepAlreadyRunningError,
} from '@infersweep/orchestrator';
import { taskQueueFor } from '@infersweep/core';
import { plansToStart } from '../ops/plans';
import { out, err, EXIT, ExitWith, UsageError } from '../ops/cli';
import { openSessionOrStartStack } from '../ops/embedded';
import { follow } from '../ops/follow';
import { activePollers } from '../ops/temporal';

export interface SweepOpts {
  orientation: string;
  config: string;
  cluster: string;
  points?: string;
  label?: string;
  detach?: boolean;
  json?: boolean;
}

/** Plan, start, and follow (or detach from) the sweep(s) of one `sweep` command. */
export async function runSweep(opts: SweepOpts): Promise<number> {
  if (opts.label !== undefined && !/^[A-Za-z0-9._-]+$/.test(opts.label)) {
    throw new UsageError(
      `--label ${JSON.stringify(opts.label)}: use letters, digits, '.', '_' and '-' only (it becomes part of the workflow id), e.g. --label nightly-1`,
    );
  }
  const { plans, configHash } = plansToStart(opts);
  const label = opts.label ?? defaultLabel();
  const inputs = plans.map((p) => buildSweepInput(p, { configName: p.sweep, configHash, label }));
  const say = opts.json ? (l: string) => err(l) : (l: string) => out(l);
  const s = await openSessionOrStartStack(say);
  try {
    let started;
    try {
      started =
        opts.orientation === 'all'
          ? await startSweepAll(s.client, s.target, inputs)
          : await startSweep(s.client, s.target, inputs[0]!);
    } catch (e) {
      if (e instanceof SweepAlreadyRunningError) throw new ExitWith(EXIT.failure, e.message);
      throw e;
    }
    const summary = {
      sweepId: started.workflowId,
      runId: started.runId,
      uiLink: started.uiLink,
      orientations: inputs.map((i) => ({
        orientation: i.orientation,
        sweepId: i.sweepId,
        points: i.points,
        resultsDir: i.resultsDir,
      })),
      cluster: opts.cluster,
      taskQueue: taskQueueFor(opts.cluster),
    };
    if (opts.json) out(JSON.stringify(summary));
    else {
      out(`sweep   ${started.workflowId}`);
      out(`Web UI  ${started.uiLink}`);
      out(`points  ${inputs.map((i) => `${i.orientation}: c=${i.points.join(',')}`).join('; ')}`);
    }
    if (opts.detach) {
      const pollers = await activePollers(s.client, s.target.namespace, opts.cluster).catch(() => 1);
      if (pollers === 0) {
        say(
          `note: no worker polls ${taskQueueFor(opts.cluster)} yet, so the sweep waits until one does: run \`npx nx run worker:serve -- --cluster ${opts.cluster}\`, or \`infersweep watch ${started.workflowId}\` (runs one in-process)`,
        );
      } else if (!opts.json) say(`follow it: infersweep watch ${started.workflowId}`);
      return EXIT.ok;
    }
    return await follow(s, started.workflowId, opts.json ? { write: (l) => err(l), plain: true } : {});
  } finally {
    await s.close().catch(() => undefined);
  }
}
