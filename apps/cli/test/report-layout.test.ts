/**
 * The HTML report as a browser lays it out (headless Chromium, as `report --png` uses): at a
 * 1300 px window the point table's last column can be reached (the table scrolls inside its box
 * instead of being cut), and an allocation whose Slurm reason is `None` shows no reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSweepResults } from '../src/report/records';
import { renderReport } from '../src/report/html';
import { launchChromium } from '../src/ops/browser';
import { tempRoot, writeSweep } from './fixtures/sweep-results';

const root = tempRoot();
const ended = {
  requestedAt: '2026-01-01T00:00:00.000Z',
  grantedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T01:00:00.000Z',
};
const s = writeSweep(root, {
  sweepId: 'sweep-kimik3-balanced-local-L1',
  orientation: 'balanced',
  points: [
    { concurrency: 4, valid: true, tputPerGpu: 300, interactivity: 80 },
    {
      concurrency: 64,
      valid: false,
      reasons: ['error rate 0.31 > 0.10 and a long explanation of what the gate saw'],
      tputPerGpu: 950,
      interactivity: 10,
    },
  ],
  allocations: [
    {
      attempt: 1,
      jobName: 'infersweep-x-a1',
      jobId: '101',
      nodes: ['node1'],
      ...ended,
      ended: 'released',
      reason: 'None',
    },
    {
      attempt: 2,
      jobName: 'infersweep-x-a2',
      jobId: '102',
      nodes: ['node2'],
      ...ended,
      ended: 'NODE_FAIL',
      reason: 'node2 died',
    },
  ],
});
const html = renderReport({ sweeps: [loadSweepResults(s.dir, s.progress)], outDir: root });

describe('the report in a 1300 px browser window', () => {
  let chromium: Awaited<ReturnType<typeof launchChromium>>;
  beforeAll(async () => {
    chromium = await launchChromium();
  });
  afterAll(async () => {
    await chromium.close();
  });

  it("the point table's last column is inside the page or its scroll box, and the page itself is not wider than the window", async () => {
    const page = await chromium.browser.newPage({ viewport: { width: 1300, height: 900 } });
    await page.setContent(html);
    // runs in the page (a string: this project's TypeScript has no DOM types)
    const box = await page.evaluate<{ overflow: string; right: number; pageWidth: number }>(`(() => {
      const table = document.querySelector('table.points');
      const scroller = table.parentElement;
      const lastHeader = table.querySelector('thead th:last-child');
      scroller.scrollLeft = scroller.scrollWidth;
      return { overflow: getComputedStyle(scroller).overflowX, right: lastHeader.getBoundingClientRect().right, pageWidth: document.documentElement.scrollWidth };
    })()`);
    expect(box.overflow).toBe('auto');
    expect(box.right).toBeLessThanOrEqual(1300);
    expect(box.pageWidth).toBeLessThanOrEqual(1300);
  });

  it('an allocation with the Slurm reason None shows an empty reason cell; a real reason is shown', async () => {
    const page = await chromium.browser.newPage();
    await page.setContent(html);
    const reasons = await page.$$eval('table.allocations tbody tr td.reasons', (cells) =>
      cells.map((c) => c.textContent),
    );
    expect(reasons).toEqual(['', 'node2 died']);
  });
});
