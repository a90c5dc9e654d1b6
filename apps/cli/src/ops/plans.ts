/**
 * Planning for the commands that plan (`plan`) or start sweeps (`sweep`, `schedule create`): the
 * config is read once per command, and the plans, the site check and the config hash all come from
 * that one read. A bad config is an InputError (exit 2 through action()) and nothing is started.
 */
import { isAbsolute } from 'node:path';
import { checkSiteFiles, formatIssue, planSweep, siteFileIssues, type SweepPlan } from '@infersweep/topology';
import { DEFAULT_CLUSTER, fnv1a64 } from '@infersweep/core';
import { localFileProbe } from '@infersweep/slurm';
import { loadSweepConfig, temporalTarget, type ConfigFile } from '@infersweep/orchestrator';
import { EXIT, ExitWith, err, parsePointList } from './cli';

export interface PlanCliOptions {
  orientation: string;
  config?: string;
  cluster?: string;
  points?: string;
  json?: boolean;
  /** Plan even when the capacity check refuses. */
  force?: boolean;
}

/** Read and parse the config the options name (placeholders expanded for the chosen cluster only). */
export function readConfig(opts: Pick<PlanCliOptions, 'config' | 'cluster'>): ConfigFile {
  return loadSweepConfig({
    ...(opts.config ? { config: opts.config } : {}),
    clusters: [opts.cluster ?? DEFAULT_CLUSTER],
  });
}

/** The plans of the chosen orientation (or all, in config order) on the chosen cluster. */
export function makePlans(file: ConfigFile, opts: PlanCliOptions): SweepPlan[] {
  const cluster = opts.cluster ?? DEFAULT_CLUSTER;
  const { config, source } = file;
  const names = opts.orientation === 'all' ? Object.keys(config.orientations) : [opts.orientation];
  const points = opts.points === undefined ? undefined : parsePointList(opts.points);
  return names.map((orientation) =>
    planSweep(config, {
      orientation,
      cluster,
      source,
      ...(points ? { points } : {}),
      ...(opts.force ? { force: true } : {}),
    }),
  );
}

/**
 * The worker-side files the cluster profile names (SSH key, known_hosts, secrets file): exist,
 * readable, private keys not group/world-accessible. As lines (plan prints them as warnings, so a
 * plan can be read on a machine that is not the worker).
 */
export function siteWarnings(file: ConfigFile, opts: Pick<PlanCliOptions, 'cluster'>): string[] {
  return siteFileIssues(file.config, opts.cluster ?? DEFAULT_CLUSTER, localFileProbe, file.source).map((i) =>
    formatIssue(file.source.file, i),
  );
}

/**
 * For `sweep` and `schedule create`: the plans and the config hash, or a ConfigError (exit 2) when
 * the config is wrong, or the site files are wrong on this host while it runs the worker.
 */
export function plansToStart(opts: PlanCliOptions & { config: string }): { plans: SweepPlan[]; configHash: string } {
  const data = process.env.INFERSWEEP_DATA;
  if (data !== undefined && !isAbsolute(data)) {
    throw new ExitWith(
      EXIT.usage,
      `INFERSWEEP_DATA=${JSON.stringify(data)}: the results root must be an absolute path (the worker resolves it from its own working directory otherwise)`,
    );
  }
  const file = readConfig(opts);
  const plans = launchable(makePlans(file, opts), opts.orientation);
  // the files are the worker's: checked here only when the worker is this process (the embedded
  // dev server); a deployed worker checks them on its own host at prepareSweep, before allocating
  if (temporalTarget().embedded)
    checkSiteFiles(file.config, opts.cluster ?? DEFAULT_CLUSTER, localFileProbe, file.source);
  else
    for (const w of siteWarnings(file, opts))
      err(`WARNING (this host; the worker checks its own before allocating): ${w}`);
  return { plans, configHash: fnv1a64(file.text) };
}

/**
 * The plans a sweep can launch. A disaggregated (prefill/decode) orientation runs when infersweep launches its
 * router (`llm-d-pd-sidecar`, a Slurm step beside the workers); one behind another router is planned (`plan`
 * shows every role's argv) but not launched: named, it is refused (exit 2); under `--orientation all` it is
 * left out with a line saying so.
 */
export function launchable(plans: SweepPlan[], orientation: string): SweepPlan[] {
  const pd = plans.filter((p) => p.disaggregation !== undefined && p.disaggregation.router.kind !== 'llm-d-pd-sidecar');
  if (pd.length === 0) return plans;
  const names = pd.map((p) => `${p.orientation} (router ${p.disaggregation?.router.kind})`).join(', ');
  const why = 'sweeps launch P/D deployments behind router llm-d-pd-sidecar only';
  if (orientation !== 'all')
    throw new ExitWith(
      EXIT.usage,
      `orientation ${names} is disaggregated (prefill/decode): \`plan\` shows its launch, but ${why}`,
    );
  err(`note: leaving out disaggregated orientation(s) ${names}: ${why} (\`plan\` shows them)`);
  const rest = plans.filter((p) => !pd.includes(p));
  if (rest.length === 0) throw new ExitWith(EXIT.usage, 'no orientation can be launched: nothing to launch');
  return rest;
}
