/**
 * `results --format inferencex`: each point record of a sweep → InferenceX's aggregated agentic
 * result (libs/agentx `toInferencex`), written as `<name>_conc<N>.json` into one folder or next to
 * each point, with `<name>_conc<N>.json.infersweep` beside it (libs/agentx `inferencexSidecar`: the
 * validity verdict and whether the point ran InferenceX's workload; for a replicated point also its
 * mean's 95 % CI over allocations, n and the between-allocation share, and each further replicate
 * exported as `<name>_conc<N>_r<k>.json`). The plan (`<resultsDir>/plan.json`)
 * supplies hw, model prefix, precision and topology. Invalid points are left out unless `includeInvalid`:
 * InferenceX's schema has no validity field, so an exported invalid point would read as a result.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  SIDECAR_SUFFIX,
  inferencexContext,
  inferencexFileName,
  inferencexSidecar,
  pointResultSchema,
  toInferencex,
  type PointResult,
  type RequestRecord,
  readRequestRecords,
} from '@infersweep/agentx';
import { POINT_REQUESTS_FILE, ResultsLayout } from '@infersweep/core';
import type { SweepResults } from './records';
import type { ReplicateRow } from './replicates';
import { readPlanFile } from './plan-file';

export interface InferencexWritten {
  sweepId: string;
  concurrency: number;
  path: string;
  valid: boolean;
}

export interface InferencexExport {
  written: InferencexWritten[];
  skipped: string[];
  /** invalid points not exported (no `includeInvalid`), with their reasons */
  leftOutInvalid: { sweepId: string; concurrency: number; reasons: string[] }[];
  /** per sweep whose exported points did not run InferenceX's workload: why (libs/agentx inferencexWorkloadDifferences) */
  notComparable: { sweepId: string; orientation: string; because: string[] }[];
}

function readRequests(file: string | null): RequestRecord[] | undefined {
  return file === null || !existsSync(file) ? undefined : readRequestRecords(file);
}

/**
 * aiperf's server-metrics export next to an aiperf point's record (`aiperf_artifacts/server_metrics_export.json`,
 * libs/agentx/src/aiperf/run.ts), as toInferencex's input: InferenceX reads its per-source values from it.
 */
function aiperfServerMetricsOf(r: PointResult, record: string): { aiperfServerMetrics?: unknown } {
  if (r.client.name !== 'aiperf') return {};
  const file = join(dirname(record), 'aiperf_artifacts', 'server_metrics_export.json');
  return existsSync(file) ? { aiperfServerMetrics: JSON.parse(readFileSync(file, 'utf8')) as unknown } : {};
}

/**
 * The server logs teardown copied (`logs/server-<k>/<node>.log`), of the lowest-numbered server that has
 * any: every server of a sweep runs the same recipe, so each reports the same KV pool.
 */
function readServerLogs(logsDir: string): string[] | undefined {
  if (!existsSync(logsDir)) return undefined;
  const servers = readdirSync(logsDir)
    .filter((d) => /^server-\d+$/.test(d))
    .sort((a, b) => Number(a.slice(7)) - Number(b.slice(7)));
  for (const d of servers) {
    const files = readdirSync(join(logsDir, d)).filter((f) => f.endsWith('.log'));
    if (files.length > 0) return files.sort().map((f) => readFileSync(join(logsDir, d, f), 'utf8'));
  }
  return undefined;
}

/** The first pass's record, then each settled replicate's (the config's replicates block): one export file each. */
function copiesOf(
  p: SweepResults['points'][number],
  rep: ReplicateRow | undefined,
  layout: ResultsLayout,
): { record: string; requests: string; k: number }[] {
  return [
    {
      record: p.resultPath ?? layout.pointRecord(p.concurrency),
      requests: p.requestsJsonl ?? layout.pointRequests(p.concurrency),
      k: 1,
    },
    ...(rep?.resultPaths
      .slice(1)
      .map((record, i) => ({ record, requests: join(dirname(record), POINT_REQUESTS_FILE), k: i + 2 })) ?? []),
  ];
}

/**
 * Write one InferenceX aggregate (and its sidecar) per point that has a record and is valid, or every such
 * point with `includeInvalid`. `outDir` undefined: next to each point's record.
 */
export function writeInferencex(
  sweeps: readonly SweepResults[],
  outDir: string | undefined,
  opts: { includeInvalid?: boolean } = {},
): InferencexExport {
  const written: InferencexWritten[] = [];
  const skipped: string[] = [];
  const leftOutInvalid: InferencexExport['leftOutInvalid'] = [];
  const notComparable: InferencexExport['notComparable'] = [];
  for (const s of sweeps) {
    const because = new Set<string>();
    const layout = new ResultsLayout(s.resultsDir);
    const { plan, problem } = readPlanFile(s.resultsDir);
    if (!plan) {
      skipped.push(`${s.sweepId}: ${problem} (the plan supplies hw, precision and topology)`);
      continue;
    }
    const ctx = inferencexContext(plan);
    const serverLogs = readServerLogs(layout.logsDir);
    for (const p of s.points) {
      const rep = s.replicates?.find((x) => x.concurrency === p.concurrency);
      const copies = copiesOf(p, rep, layout);
      for (const { record, requests: requestsFile, k } of copies) {
        const at = `${s.sweepId} c=${p.concurrency}${k > 1 ? ` replicate ${k}` : ''}`;
        if (!existsSync(record)) {
          skipped.push(`${at}: no record`);
          continue;
        }
        const r = pointResultSchema.safeParse(JSON.parse(readFileSync(record, 'utf8')));
        if (!r.success) {
          skipped.push(
            `${at}: ${record} is not a point record (${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message})`,
          );
          continue;
        }
        if (!r.data.submission_valid && !opts.includeInvalid) {
          leftOutInvalid.push({
            sweepId: s.sweepId,
            concurrency: p.concurrency,
            reasons: r.data.submission_invalid_reasons,
          });
          continue;
        }
        const requests = readRequests(requestsFile);
        if (requests === undefined) {
          skipped.push(`${at}: no requests.jsonl (InferenceX's metrics are computed from the requests)`);
          continue;
        }
        let agg;
        try {
          agg = toInferencex(r.data, ctx, { requests, serverLogs, ...aiperfServerMetricsOf(r.data, record) });
        } catch (e) {
          skipped.push(`${at}: ${(e as Error).message}`);
          continue;
        }
        const name = inferencexFileName(ctx, p.concurrency);
        const path = join(outDir ?? dirname(record), k === 1 ? name : name.replace(/\.json$/, `_r${k}.json`));
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, `${JSON.stringify(agg, null, 2)}\n`);
        // InferenceX's aggregate schema is strict: the point's CI over allocations goes in the sidecar
        const sidecar = {
          ...inferencexSidecar(r.data, ctx.modelPrefix),
          ...(rep
            ? {
                replicate: k,
                replicates: { n: rep.n, status: rep.status, ci95: rep.stats, betweenAllocationShare: rep.betweenShare },
              }
            : {}),
        };
        writeFileSync(`${path}${SIDECAR_SUFFIX}`, `${JSON.stringify(sidecar, null, 2)}\n`);
        for (const b of sidecar.not_comparable_because) because.add(b);
        written.push({ sweepId: s.sweepId, concurrency: p.concurrency, path, valid: r.data.submission_valid });
      }
    }
    if (because.size > 0) notComparable.push({ sweepId: s.sweepId, orientation: s.orientation, because: [...because] });
  }
  return { written, skipped, leftOutInvalid, notComparable };
}
