/**
 * Weighted isotonic regression by pool-adjacent-violators: the monotone sequence closest to `y` in
 * weighted least squares (exact, O(n)). The values are in the order of their x (e.g. concurrency).
 */
export function isotonic(
  y: readonly number[],
  opts: { weights?: readonly number[]; increasing?: boolean } = {},
): number[] {
  const n = y.length;
  const w = opts.weights ?? new Array<number>(n).fill(1);
  if (w.length !== n) throw new RangeError(`isotonic: ${n} values and ${w.length} weights`);
  if (w.some((x) => !(x > 0))) throw new RangeError('isotonic: weights must be positive');
  const sign = opts.increasing === false ? -1 : 1;
  // blocks of pooled values: their weighted mean (in the increasing orientation), weight and length
  const value: number[] = [];
  const weight: number[] = [];
  const size: number[] = [];
  for (let i = 0; i < n; i++) {
    value.push(sign * y[i]!);
    weight.push(w[i]!);
    size.push(1);
    while (value.length > 1 && value[value.length - 2]! > value[value.length - 1]!) {
      const v2 = value.pop()!;
      const w2 = weight.pop()!;
      const s2 = size.pop()!;
      const top = value.length - 1;
      const wt = weight[top]! + w2;
      value[top] = (value[top]! * weight[top]! + v2 * w2) / wt;
      weight[top] = wt;
      size[top] = size[top]! + s2;
    }
  }
  return value.flatMap((v, b) => new Array<number>(size[b]!).fill(sign * v));
}
