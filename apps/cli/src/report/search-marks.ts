/**
 * The adaptive search in the report: the SLO limit and the knee with the two points that bracket
 * each (their uncertainty), which points the search added and why, and the chart marks for both.
 * Pure over the sweep's progress (libs/sweep searchLines words it the same way for `status`).
 */
import { searchLines, type Bracket, type SweepProgress } from '@infersweep/sweep';
import type { ChartMark } from './chart';
import { esc } from './chart';

export interface SearchView {
  lines: string[];
  limit?: Bracket;
  knee?: Bracket;
  /** concurrency → why the search added it */
  added: Record<number, string>;
}

export function searchViewOf(p: Pick<SweepProgress, 'points' | 'search'> | undefined): SearchView | null {
  if (p === undefined) return null;
  const lines = searchLines(p);
  if (lines.length === 0) return null;
  const added: Record<number, string> = {};
  for (const pt of p.points)
    if (pt.origin === 'search') added[pt.concurrency] = pt.searchReason ?? 'added by the search';
  return {
    lines,
    ...(p.search?.limit ? { limit: p.search.limit } : {}),
    ...(p.search?.knee ? { knee: p.search.knee } : {}),
    added,
  };
}

const between = (b: Bracket) =>
  b.below !== undefined && b.above !== undefined
    ? `between c=${b.below} and c=${b.above}`
    : b.below !== undefined
      ? `≥ c=${b.below}`
      : '';

/** Chart marks: the SLO limit and the knee, each on its point, labelled with its bracket. */
export function searchMarks(view: SearchView | null): ChartMark[] {
  const marks: ChartMark[] = [];
  if (view?.limit?.below !== undefined)
    marks.push({
      kind: 'slo-limit',
      concurrency: view.limit.below,
      text: `SLO limit c=${view.limit.below}`,
      detail: `${between(view.limit)}: ${view.limit.text}`,
    });
  if (view?.knee?.concurrency !== undefined && view.knee.concurrency !== null)
    marks.push({
      kind: 'knee',
      concurrency: view.knee.concurrency,
      text: `knee c=${view.knee.concurrency}`,
      detail: `${between(view.knee)}: ${view.knee.text}`,
    });
  return marks;
}

/** The search block of an orientation's section. */
export function searchHtml(view: SearchView | null): string {
  if (view === null) return '';
  return `<h3>Adaptive search</h3>
<ul class="search">${view.lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>`;
}

/** The mark of a point the search added, for the point table. */
export function addedTag(view: SearchView | null, concurrency: number): string {
  const why = view?.added[concurrency];
  return why === undefined ? '' : ` <span class="added" title="${esc(why)}">added</span>`;
}
