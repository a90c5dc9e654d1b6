import { describe, expect, it } from 'vitest';
import { loadSweepResults } from '../src/report/records';
import { renderReport } from '../src/report/html';
import { statusText, sweepSucceeded } from '../src/ops/render';
import type { SweepView } from '../src/ops/temporal';
import { tempRoot, writeSweep } from './fixtures/sweep-results';

/**
 * A sweep whose search added c=8, c=16 (invalid: past saturation) and c=12, and found the SLO limit
 * at 12 (c=12 meets it, c=16 fails) and the knee at 8.
 */
function searchedSweep() {
  const c = writeSweep(tempRoot(), {
    sweepId: 'sweep-search',
    orientation: 'balanced',
    points: [
      { concurrency: 4, valid: true, tputPerGpu: 400, interactivity: 90 },
      { concurrency: 8, valid: true, tputPerGpu: 780, interactivity: 85 },
      { concurrency: 12, valid: true, tputPerGpu: 820, interactivity: 60 },
      {
        concurrency: 16,
        valid: false,
        reasons: ['run_cancelled: waiting requests queue is full'],
        tputPerGpu: 1,
        interactivity: 1,
      },
    ],
  });
  const reason: Record<number, string> = {
    8: 'bracket: c=4 meets the SLO, doubling to c=8',
    16: 'bracket: c=8 meets the SLO, doubling to c=16',
    12: 'bisect: c=8 meets the SLO, c=16 fails; c=12 halves the bracket (resolution 4)',
  };
  for (const pt of c.progress.points)
    if (reason[pt.concurrency]) Object.assign(pt, { origin: 'search', searchReason: reason[pt.concurrency] });
  c.progress.search = {
    limit: {
      concurrency: 12,
      below: 12,
      above: 16,
      status: 'found',
      text: '12 (c=12 meets the SLO, c=16 fails; resolution 4)',
    },
    knee: { concurrency: 8, below: 4, above: 12, status: 'found', text: 'c=8 (turn 61° between c=4 and c=12)' },
    stoppedBy: 'resolved',
    pointsAdded: 3,
  };
  return c;
}

describe('report and status of a searched sweep', () => {
  it('the chart marks the SLO limit and the knee with their bracketing points; the table tags added points', () => {
    const c = searchedSweep();
    const html = renderReport({ sweeps: [loadSweepResults(c.dir, c.progress)], outDir: c.dir });
    expect(html).toMatch(
      /<g class="mark slo-limit" data-concurrency="12">.*SLO limit c=12<\/text><title>SLO limit c=12\nbetween c=12 and c=16: 12 \(c=12 meets the SLO, c=16 fails; resolution 4\)<\/title>/s,
    );
    expect(html).toMatch(
      /<g class="mark knee" data-concurrency="8">.*knee c=8<\/text><title>knee c=8\nbetween c=4 and c=12: /s,
    );
    expect(html).toContain('<li>1 configured + 3 added point(s), ended: resolved</li>');
    expect(html).toContain('<li>SLO limit 12 (c=12 meets the SLO, c=16 fails; resolution 4)</li>');
    expect((html.match(/<span class="added" title="[^"]+">added<\/span>/g) ?? []).length).toBe(3);
    expect(html).toContain(
      '<span class="added" title="bisect: c=8 meets the SLO, c=16 fails; c=12 halves the bracket (resolution 4)">added</span>',
    );
  });

  it('status lists added points and the limit; an invalid point past saturation does not fail a searched sweep', () => {
    const c = searchedSweep();
    const view = {
      workflowId: 'sweep-search',
      status: 'COMPLETED',
      kind: 'sweep',
      uiLink: 'http://ui',
      progress: c.progress,
      live: [],
      children: [],
    } as unknown as SweepView;
    const text = statusText(view);
    expect(text).toMatch(/c=16\s+invalid .*\(added by search\)/);
    expect(text).toContain(
      '  search       1 configured + 3 added point(s), ended: resolved\n      SLO limit 12 (c=12 meets the SLO, c=16 fails; resolution 4)',
    );
    expect(sweepSucceeded(view)).toBe(true);
    const unsearched = { ...view, progress: { ...c.progress, search: undefined } } as SweepView;
    expect(sweepSucceeded(unsearched)).toBe(false);
  });
});
