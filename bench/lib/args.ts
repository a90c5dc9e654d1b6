/** Bench option parsing (pure; unit-tested in bench/test/args.test.ts). Bad input names the option, the value and the fix. */

/** `--key value` options of a bench. */
export function options(args: string[]): (k: string) => string | undefined {
  return (k) => {
    const i = args.indexOf(k);
    return i >= 0 ? args[i + 1] : undefined;
  };
}

/** "16,64" → [16, 64]; every entry a positive number. */
export function numList(s: string, option = 'list'): number[] {
  return s.split(',').map((x) => {
    const v = Number(x);
    if (x.trim() === '' || !Number.isFinite(v) || v <= 0)
      throw new Error(`bench ${option}: "${x}" is not a positive number (give a comma-separated list, e.g. 16,64)`);
    return v;
  });
}

/** "16x4k" → { concurrency: 16, contextTokens: 4096 }; k = 1024, m = 1024² (1m = the 1M-token context). */
export function parseCell(cell: string): { concurrency: number; contextTokens: number } {
  const m = /^(\d+)x(\d+)([km]?)$/i.exec(cell.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1)
    throw new Error(`bench scaling --cells: "${cell}" is not <concurrency>x<context>[k|m] (e.g. 128x100k)`);
  const unit = m[3]!.toLowerCase();
  const mult = unit === 'm' ? 1024 * 1024 : unit === 'k' ? 1024 : 1;
  return { concurrency: Number(m[1]), contextTokens: Number(m[2]) * mult };
}
