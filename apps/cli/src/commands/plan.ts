/**
 * `infersweep plan --orientation <name|all> [--config FILE] [--cluster PROFILE] [--points 4,8] [--json]`
 * Prints the launch plan without touching a cluster. `--json` prints one plan object
 * (SweepPlan, libs/topology), or for `--orientation all` a JSON array of plans in config order.
 * A bad config exits 2 with the error on stderr and prints no plan.
 */
import type { Command } from 'commander';
import { InfersweepError, planSweep, type SweepPlan } from '@infersweep/topology';
import { DEFAULT_CLUSTER, DEFAULT_CONFIG, loadSweepConfig } from '../config-file';

export interface PlanCliOptions {
  orientation: string;
  config?: string;
  cluster?: string;
  points?: string;
  json?: boolean;
}

function parsePoints(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const parts = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const nums = parts.map(Number);
  if (parts.length === 0 || nums.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new InfersweepError(`--points ${JSON.stringify(text)}: expected a comma-separated list of positive integers, e.g. 4,8`, { retryable: false });
  }
  return nums;
}

export function makePlans(opts: PlanCliOptions): SweepPlan[] {
  const cluster = opts.cluster ?? DEFAULT_CLUSTER;
  const { config, source } = loadSweepConfig({ ...(opts.config ? { config: opts.config } : {}), clusters: [cluster] });
  const names = opts.orientation === 'all' ? Object.keys(config.orientations) : [opts.orientation];
  const points = parsePoints(opts.points);
  return names.map((orientation) => planSweep(config, { orientation, cluster, source, ...(points ? { points } : {}) }));
}

const q = (a: string) => (/^[A-Za-z0-9_./:=,@%+{}-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);

export function renderPlan(p: SweepPlan): string {
  const t = p.topology;
  const out: string[] = [];
  out.push(`# ${p.sweep} — orientation ${p.orientation} on cluster ${p.cluster}   (plan ${p.planHash})`);
  out.push(
    `topology   TP${t.tp} PP${t.pp} DP${t.dp} EP${t.ep}${t.expertParallel ? '' : ' (off)'}, ${t.nodes} node(s) × ${t.gpusPerNode} GPUs = ${t.gpus} GPUs, ` +
      `replica ${t.gpusPerReplica} GPUs ${t.replica}${t.dpLocal === null ? '' : `, DP-local ${t.dpLocal}`}, LB ${t.lbMode}`,
  );
  const s = p.slurm;
  out.push(
    `slurm      --nodes ${s.nodes} --partition ${s.partition}${s.account ? ` --account ${s.account}` : ''}${s.gres ? ` --gres=gpu:${s.gpusPerNode}` : ` (${s.gpusPerNode} GPUs/node, no gres)`}` +
      `${s.exclusive ? ' --exclusive' : ''} --time ${s.timeLimitMinutes} (partition max ${s.maxWallMinutes})`,
  );
  out.push(`time limit ${s.timeLimitDerivation}`);
  out.push(`runtime    ${s.containerRuntime}${s.containerRuntime === 'pyxis' ? ` image ${s.image}` : ''}; engine ${p.engine.kind} ${p.engine.version}, launched as ${p.engine.launch}`);
  out.push(`points     c = ${p.points.join(', ')}   (policy ${p.deployment.policy}, ${p.deployment.allocations} allocation(s), per point ${p.pointBudgets[0]?.totalSeconds ?? 0} s)`);
  out.push(`endpoints  ${p.endpoints.join(' ')}${p.clientMustBalance ? '   (client must balance across them)' : ''}`);
  out.push(`metrics    ${p.metricsEndpoints.join(' ')}`);
  out.push(
    `engine ids ${p.engineIds.labelled ? p.engineIds.perMetricsEndpoint.map((ids) => `engine="${ids.join('|')}"`).join('; ') : `none — ${p.engineIds.reason}`}`,
  );
  for (const n of p.nodes) {
    out.push('');
    out.push(`node ${n.rank}${n.serves ? ' (serves HTTP)' : ' (headless)'}`);
    out.push(`  argv    ${n.argv.map(q).join(' ')}`);
    if (JSON.stringify(n.launchArgv) !== JSON.stringify(n.argv)) out.push(`  launch  ${n.launchArgv.map(q).join(' ')}`);
    out.push(`  env     ${Object.entries(n.env).map(([k, v]) => `${k}=${q(v)}`).join(' ')}`);
  }
  out.push('');
  out.push(`placeholders (filled after allocation): ${p.placeholders.map((x) => `{{${x}}}`).join(' ')}`);
  for (const w of p.warnings) out.push(`WARNING: ${w}`);
  for (const n of p.notes) out.push(`note: ${n}`);
  return out.join('\n');
}

export function register(program: Command): void {
  program
    .command('plan')
    .description('Print the launch plan for an orientation (no cluster needed)')
    .requiredOption('-o, --orientation <name>', 'orientation name, or "all"')
    .option('-c, --config <file>', 'sweep config', DEFAULT_CONFIG)
    .option('--cluster <profile>', 'cluster profile', DEFAULT_CLUSTER)
    .option('--points <list>', 'only these concurrency points, e.g. 4,8')
    .option('--json', 'print JSON (one plan object; an array of plans for --orientation all)')
    .action((opts: PlanCliOptions) => {
      let plans: SweepPlan[];
      try {
        plans = makePlans(opts);
      } catch (e) {
        if (e instanceof InfersweepError) {
          process.stderr.write(`infersweep plan: ${e.message.includes('\n') ? `\n${e.message}` : e.message}\n`);
          process.exit(2);
        }
        throw e;
      }
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(opts.orientation === 'all' ? plans : plans[0], null, 2)}\n`);
      } else {
        process.stdout.write(`${plans.map(renderPlan).join('\n\n')}\n`);
      }
    });
}
