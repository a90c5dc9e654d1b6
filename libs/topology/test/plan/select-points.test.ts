import { describe, expect, it } from 'vitest';
import { selectPoints } from '../../src/plan/select-points';
import { draftOf } from './fixture';

describe('selectPoints', () => {
  it("all of the orientation's points, or the requested ones in the orientation's order", () => {
    expect(selectPoints(draftOf('balanced'))).toEqual([4, 8, 16, 32]);
    expect(selectPoints(draftOf('balanced', 'h200', undefined, [32, 8]))).toEqual([8, 32]);
  });

  it('a point not in the list, or an empty request, is an issue', () => {
    const d = draftOf('balanced', 'h200', undefined, [8, 5]);
    selectPoints(d);
    expect(d.issues.list.map((i) => i.message)).toEqual([
      "requested point 5 is not in orientation balanced's concurrency list [4, 8, 16, 32]",
    ]);
    const empty = draftOf('balanced', 'h200', undefined, []);
    selectPoints(empty);
    expect(empty.issues.list[0]!.message).toBe('no points requested; pass at least one');
  });
});
