/**
 * A lane runs its files in the order test/lanes.ts lists them: test/gate.ts hands each lane's list to its vitest in
 * INFERSWEEP_LANE_ORDER (root-relative paths, comma-separated), and files not in the list follow in vitest's own
 * order. Without it vitest's order stands (failed first, then the longest; on a fresh clone, with no cache, the
 * largest file first), which put the timing-accuracy files of lane A at the start of CI, beside the unit project.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export default class LaneSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const order = (process.env.INFERSWEEP_LANE_ORDER ?? '').split(',').filter(Boolean);
    if (order.length === 0) return sorted;
    const rank = (s: TestSpecification): number => {
      const i = order.indexOf(relative(this.ctx.config.root, s.moduleId));
      return i < 0 ? order.length : i;
    };
    return sorted
      .map((s, k) => ({ s, k }))
      .sort((a, b) => rank(a.s) - rank(b.s) || a.k - b.k)
      .map(({ s }) => s);
  }
}
