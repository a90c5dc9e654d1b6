import type { PlanDraft } from './draft';

/** The concurrency points to run: the orientation's list, or the requested subset of it (in list order). */
export function selectPoints(d: PlanDraft): number[] {
  const all = d.orientation.concurrency;
  const requested = d.opts.points;
  if (requested === undefined) return [...all];
  const where = [...d.oPath, 'concurrency'];
  if (requested.length === 0) d.issues.add(where, all, 'no points requested; pass at least one');
  for (const p of requested) {
    if (!all.includes(p))
      d.issues.add(
        where,
        all,
        `requested point ${p} is not in orientation ${d.oName}'s concurrency list [${all.join(', ')}]`,
      );
  }
  return all.filter((c) => requested.includes(c));
}
