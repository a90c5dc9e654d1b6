import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseSweepConfig, type LoadedConfig } from '../src/index';

export const SHIPPED = 'configs/kimik3-fp4-h200.yaml';
export const shippedText = readFileSync(fileURLToPath(new URL(`../../../${SHIPPED}`, import.meta.url)), 'utf8');
export const stackEnv = { INFERSWEEP_STACK: '/stack' };

export function loadShipped(clusters?: string[]): LoadedConfig {
  return parseSweepConfig(shippedText, { file: SHIPPED, env: stackEnv, ...(clusters ? { clusters } : {}) });
}

/** Edit the shipped YAML text: replace `from` (must occur) with `to`. */
export function edit(from: string | RegExp, to: string): string {
  const out = shippedText.replace(from, to);
  if (out === shippedText) throw new Error(`edit: ${String(from)} not found in ${SHIPPED}`);
  return out;
}
