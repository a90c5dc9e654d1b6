/** What `infersweep janitor` runs (its options are in ../commands/janitor.ts). */
import { executorForProfile, SlurmCluster } from '@infersweep/slurm';
import { allocationJobName, deploymentJobPrefix, JOB_NAME_PREFIX, SWEEP_WORKFLOW_TYPE } from '@infersweep/core';
import { currentDeploymentTag, loadSweepConfig } from '@infersweep/orchestrator';
import { err, out, UsageError } from '../ops/cli';
import { withSession, type Session } from '../ops/temporal';

export interface LiveJob {
  jobId: string;
  name: string;
  state: string;
  nodes: string[];
}

export interface JanitorVerdict extends LiveJob {
  verdict: 'running-sweep' | 'closed-sweep' | 'unknown-sweep';
  sweepId?: string;
  sweepStatus?: string;
}

/** The job-name stem of every allocation of a sweep: `infersweep-<tag>-<tail>-<hash>-a` (attempt follows). */
export function jobNameStem(sweepId: string, tag: string): string {
  return allocationJobName(sweepId, 0, tag).replace(/0$/, '');
}

/** Match live jobs to sweeps (of deployment `tag`) by their name stem. Orphans: a closed sweep, or none known. */
export function judge(
  jobs: LiveJob[],
  sweeps: { workflowId: string; status: string }[],
  tag: string,
): JanitorVerdict[] {
  const byStem = new Map<string, { workflowId: string; status: string }>();
  // a running execution wins over an older closed one with the same id
  for (const s of sweeps) {
    const stem = jobNameStem(s.workflowId, tag);
    const prev = byStem.get(stem);
    if (!prev || s.status === 'RUNNING') byStem.set(stem, s);
  }
  return jobs.map((j) => {
    const m = /^(.*-a)\d+$/.exec(j.name);
    const s = m ? byStem.get(m[1]!) : undefined;
    if (!s) return { ...j, verdict: 'unknown-sweep' };
    return {
      ...j,
      verdict: s.status === 'RUNNING' ? 'running-sweep' : 'closed-sweep',
      sweepId: s.workflowId,
      sweepStatus: s.status,
    };
  });
}

async function knownSweeps(s: Session): Promise<{ workflowId: string; status: string }[]> {
  const out: { workflowId: string; status: string }[] = [];
  // running ones first and all of them; closed ones only to name them in the listing
  for await (const w of s.client.workflow.list({
    query: `WorkflowType = '${SWEEP_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`,
  }))
    out.push({ workflowId: w.workflowId, status: w.status.name });
  let n = 0;
  for await (const w of s.client.workflow.list({
    query: `WorkflowType = '${SWEEP_WORKFLOW_TYPE}' AND ExecutionStatus != 'Running'`,
  })) {
    out.push({ workflowId: w.workflowId, status: w.status.name });
    if (++n >= 2000) break;
  }
  return out;
}

export interface JanitorOpts {
  apply?: boolean;
  cluster: string;
  config: string;
  nameContains?: string;
  json?: boolean;
}

export async function janitor(opts: JanitorOpts): Promise<void> {
  const { config } = loadSweepConfig({ config: opts.config, clusters: [opts.cluster] });
  const profile = config.clusters[opts.cluster];
  if (!profile)
    throw new UsageError(
      `--cluster ${JSON.stringify(opts.cluster)}: no such profile in ${opts.config} (have: ${Object.keys(config.clusters).join(', ')})`,
    );
  const exec = executorForProfile(profile);
  try {
    const slurm = new SlurmCluster(exec);
    const tag = currentDeploymentTag();
    const prefix = deploymentJobPrefix(tag);
    // the login user's jobs only (squeue --me); array/het ids and unparsable lines are skipped, not fatal
    const all = await slurm.findOrphans(JOB_NAME_PREFIX, (line, why) =>
      err(`janitor: skipped ${line.slice(0, 120)} (${why})`),
    );
    const others = all.filter((j) => !j.name.startsWith(prefix));
    const jobs = all.filter(
      (j) => j.name.startsWith(prefix) && (!opts.nameContains || j.name.includes(opts.nameContains)),
    );
    if (others.length > 0 && !opts.json) {
      out(`${others.length} infersweep job(s) without this deployment's tag ${tag} (another deployment's): left alone`);
    }
    const verdicts = await withSession(async (s) => judge(jobs, await knownSweeps(s), tag));
    const orphans = verdicts.filter((v) => v.verdict !== 'running-sweep');
    const cancelled: string[] = [];
    if (opts.apply) {
      for (const o of orphans) {
        await slurm.release(o.jobId);
        cancelled.push(o.jobId);
      }
    }
    printVerdicts(verdicts, cancelled, opts, prefix, tag);
  } finally {
    await exec.close().catch(() => undefined);
  }
}

/** The janitor's verdicts: a JSON array, or one line per job and what to do about the orphans. */
function printVerdicts(
  verdicts: readonly JanitorVerdict[],
  cancelled: readonly string[],
  opts: JanitorOpts,
  prefix: string,
  tag: string,
): void {
  const orphans = verdicts.filter((v) => v.verdict !== 'running-sweep');
  if (opts.json) {
    out(
      JSON.stringify(
        verdicts.map((v) => ({ ...v, cancelled: cancelled.includes(v.jobId) })),
        null,
        2,
      ),
    );
    return;
  }
  if (verdicts.length === 0) {
    out(`no live ${prefix}* allocations on ${opts.cluster} (deployment tag ${tag})`);
    return;
  }
  for (const v of verdicts) {
    const why =
      v.verdict === 'running-sweep'
        ? `keep: sweep ${v.sweepId} is running`
        : v.verdict === 'closed-sweep'
          ? `ORPHAN: sweep ${v.sweepId} is ${v.sweepStatus}`
          : 'ORPHAN: no sweep on Temporal matches this job name';
    const mark = cancelled.includes(v.jobId) ? ' → cancelled' : '';
    out(
      `job ${v.jobId.padEnd(8)} ${v.name.padEnd(60)} ${v.state.padEnd(10)} ${v.nodes.join(',').padEnd(14)} ${why}${mark}`,
    );
  }
  if (orphans.length && !opts.apply)
    out(`${orphans.length} orphaned allocation(s); cancel them with \`infersweep janitor --apply\``);
  else if (opts.apply) out(`${cancelled.length} orphaned allocation(s) cancelled`);
}
