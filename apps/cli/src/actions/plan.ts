/** What `infersweep plan` runs (its options are in ../commands/plan.ts). */
import type { SweepPlan } from '@infersweep/topology';
import { shellJoin, shellQuote } from '@infersweep/core';
import { err, out } from '../ops/cli';
import { makePlans, readConfig, siteWarnings, type PlanCliOptions } from '../ops/plans';

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
  out.push(
    `runtime    ${s.containerRuntime}${s.containerRuntime === 'pyxis' ? ` image ${s.image}` : ''}; engine ${p.engine.kind} ${p.engine.version}, launched as ${p.engine.launch}`,
  );
  const e = p.engine.settings;
  out.push(
    `engine     gpu-memory-utilization ${e.gpuMemoryUtilization} · max-num-seqs ${e.maxNumSeqs} per DP rank (${e.maxNumSeqsDerivation}) · ` +
      `max-num-batched-tokens ${e.maxNumBatchedTokens ?? 'vLLM default'} · prefix caching ${e.prefixCaching ? 'on' : 'OFF'} · prompt-token details ${e.promptTokensDetails ? 'on' : 'off'}` +
      `${e.queuedPoints.length ? ` · QUEUES at c = ${e.queuedPoints.join(', ')}` : ''}`,
  );
  const sd = p.speculative;
  if (sd !== undefined)
    out.push(
      `speculative ${sd.method}${sd.model ? ` draft ${sd.model}` : ''}${sd.numSpeculativeTokens ? ` · ${sd.numSpeculativeTokens} tokens` : ''}` +
        ` · expected acceptance length ${sd.expectedAcceptanceLength ?? 'not given (no drift warning)'}`,
    );
  const cap = p.capacity;
  out.push(
    cap.checked
      ? `capacity   [${cap.verdict}${cap.forced ? ', forced' : ''}] ${cap.summary}`
      : `capacity   not checked: ${cap.reason}`,
  );
  out.push(
    `points     c = ${p.points.join(', ')}   (policy ${p.deployment.policy}, ${p.deployment.allocations} allocation(s), per point ${p.pointBudgets[0]?.totalSeconds ?? 0} s)`,
  );
  out.push(`endpoints  ${p.endpoints.join(' ')}${p.clientMustBalance ? '   (client must balance across them)' : ''}`);
  out.push(`metrics    ${p.metricsEndpoints.join(' ')}`);
  if (p.gpuTelemetry !== undefined)
    out.push(
      `telemetry  DCGM exporter http://<node>:${p.gpuTelemetry.dcgmExporterPort}/metrics every ${p.gpuTelemetry.intervalSeconds} s over each profile window (energy, J/token)`,
    );
  out.push(
    `engine ids ${p.engineIds.labelled ? p.engineIds.perMetricsEndpoint.map((ids) => `engine="${ids.join('|')}"`).join('; ') : `none — ${p.engineIds.reason}`}`,
  );
  out.push(...renderDisaggregation(p));
  for (const n of p.nodes) {
    out.push('');
    const role = n.role === undefined ? '' : ` — ${n.role} worker ${n.worker ?? 0}`;
    out.push(`node ${n.rank}${n.serves ? ' (serves HTTP)' : ' (headless)'}${role}`);
    out.push(`  argv    ${shellJoin(n.argv)}`);
    if (JSON.stringify(n.launchArgv) !== JSON.stringify(n.argv)) out.push(`  launch  ${shellJoin(n.launchArgv)}`);
    out.push(
      `  env     ${Object.entries(n.env)
        .map(([k, v]) => `${k}=${shellQuote(v)}`)
        .join(' ')}`,
    );
  }
  if (p.launchDifferences !== undefined) {
    out.push('');
    out.push(`launched on ${p.engine.launch}: the argv above, changed only by`);
    for (const d of p.launchDifferences) out.push(`  - ${d}`);
  }
  out.push('');
  out.push(`placeholders (filled after allocation): ${p.placeholders.map((x) => `{{${x}}}`).join(' ')}`);
  for (const w of p.warnings) out.push(`WARNING: ${w}`);
  for (const n of p.notes) out.push(`note: ${n}`);
  return out.join('\n');
}

/** A disaggregated plan's roles (rules 23–28): each role's worker topology, settings and capacity, and the router. */
function renderDisaggregation(p: SweepPlan): string[] {
  const pd = p.disaggregation;
  if (pd === undefined) return [];
  const out: string[] = [];
  out.push(`disagg     ${pd.roles.map((r) => `${r.workers}×${r.role}`).join(' + ')} (KV over ${pd.connector.kind})`);
  for (const r of pd.roles) {
    const t = r.topology;
    const e = r.settings;
    out.push(
      `  ${r.role.padEnd(8)} ${r.workers} worker(s) of TP${t.tp} PP${t.pp} DP${t.dp} EP${t.ep}${t.expertParallel ? '' : ' (off)'}, ${t.nodes} node(s) each, ${r.gpus} GPUs; ` +
        `nodes ${r.workerNodes.map((w) => w.join(',')).join(' | ')}; max-num-seqs ${e.maxNumSeqs}, max-num-batched-tokens ${e.maxNumBatchedTokens ?? 'vLLM default'}`,
    );
    out.push(
      `  ${''.padEnd(8)} capacity ${r.capacity.checked ? `[${r.capacity.verdict}${r.capacity.forced ? ', forced' : ''}] ${r.capacity.summary}` : `not checked: ${r.capacity.reason}`}`,
    );
    out.push(`  ${''.padEnd(8)} --kv-transfer-config ${r.kvTransferConfig}`);
  }
  out.push(`router     node ${pd.router.node}: ${shellJoin(pd.router.argv)}`);
  for (const [k, v] of Object.entries(pd.router.requestHeaders ?? {}))
    out.push(`  ${''.padEnd(8)} every request carries ${k}: ${v}`);
  return out;
}

export async function plan(opts: PlanCliOptions): Promise<void> {
  const file = readConfig(opts);
  const plans = makePlans(file, opts);
  for (const w of siteWarnings(file, opts))
    err(`WARNING: ${w} (infersweep sweep refuses to start until this is fixed)`);
  out(
    opts.json
      ? JSON.stringify(opts.orientation === 'all' ? plans : plans[0], null, 2)
      : plans.map(renderPlan).join('\n\n'),
  );
}
