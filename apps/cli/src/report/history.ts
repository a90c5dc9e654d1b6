/**
 * The report's "compared with history" section: per point and tested metric, this run, the baseline
 * (median of the runs compared), the change, its confidence, the status and a small trend chart, from
 * the verdict the end-of-sweep activity wrote next to the results (libs/history `history.json`).
 */
import {
  METRIC_LABELS,
  fmtChange,
  fmtConfidence,
  fmtNum,
  readVerdict,
  trendSvg,
  type RunVerdict,
} from '@infersweep/history';
import { esc } from './chart';
import type { SweepResults } from './records';

const STATUS_CLASS: Record<string, string> = { regression: 'bad', improvement: 'good' };

function verdictTable(s: SweepResults, v: RunVerdict): string {
  const rows = v.points.flatMap((p) =>
    p.metrics.map((m) => {
      const compared = m.baselineRunIds.length
        ? `${m.baselineRunIds.length} runs: ${m.baselineRunIds.join(', ')}`
        : '—';
      const attribution = m.change
        ? m.change.attribution.length
          ? m.change.attribution.map((a) => `${a.field} ${a.before} → ${a.after}`).join('; ')
          : 'no change in image, engine, config or cluster'
        : '';
      return `<tr class="${STATUS_CLASS[m.status] ?? ''}"><td>c=${p.concurrency}</td><td>${esc(METRIC_LABELS[m.metric])}</td><td class="num">${fmtNum(m.value)}</td><td class="num">${fmtNum(m.baseline)}</td><td class="num">${fmtChange(m.relativeChange)}</td><td class="num">${fmtConfidence(m.pValue)}</td><td>${esc(m.status)}${attribution ? `<br><small>${esc(attribution)}</small>` : ''}</td><td>${trendSvg(m.trend)}</td><td><small>${esc(compared)}</small></td></tr>`;
    }),
  );
  const head = `<p><b>regressions: ${v.regressions === 0 ? 'none' : v.regressions}</b>${v.unmeasured ? ` · <b>unmeasured: ${v.unmeasured}</b>` : ''} · ${esc(s.orientation)} · run <code>${esc(v.runId)}</code> · the last ${v.settings.confirmRuns} runs against a baseline of ${v.settings.minBaselineRuns}–${v.settings.baselineRuns} valid runs, BH at q ${v.settings.q} across ${v.family?.primaryUnits ?? 0} unit(s), at least ${(v.settings.minRelativeChange * 100).toFixed(0)} % and ${v.settings.gateSigmas} run-SDs; expected false alarms ≤ ${v.family?.falseAlarmBound ?? 0} before the gate</p>`;
  return `${head}
<table class="history"><thead><tr><th>point</th><th>metric</th><th>this run</th><th>baseline</th><th>change</th><th>confidence</th><th>status</th><th>trend</th><th>compared with</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`;
}

/** The section for every sweep of the report that has a verdict; empty when none has. */
export function historySection(sweeps: readonly SweepResults[]): string {
  const parts = sweeps.flatMap((s) => {
    const v = readVerdict(s.resultsDir);
    return v ? [verdictTable(s, v)] : [];
  });
  if (parts.length === 0) return '';
  return `<h2 id="history">Compared with history</h2>
<p class="note">Each point against earlier runs of the same config, orientation, model, GPU, cluster, client, workload and concurrency (invalid runs never count; a scheduled run against its schedule's runs). The baseline is the median of the runs compared; confidence is 1 − p of a t-test of the last runs against them on log values, with the baseline's autocorrelation; an orientation's points are combined per metric and the run's units controlled together (Benjamini–Hochberg); a change is attributed to what differs in the run context (image, engine version, launch fingerprint, plan). "pending": a change flagged on an earlier night that still holds (not counted again).</p>
${parts.join('\n')}`;
}
