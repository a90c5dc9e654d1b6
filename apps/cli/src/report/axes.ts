/**
 * The report chart's axes: no imports but types, so a command registers `--x-axis` without
 * loading the report.
 */
import type { PointRow } from './records';

/**
 * The chart's x-axis. `e2e-norm-p90` (default, InferenceX's AgentX axis): P90 E2E-normalized
 * interactivity, 1 / p90(E2EL/OSL) over the point's successful requests; `itl-p50`: 1 / ITL p50.
 */
export const X_AXES = {
  'e2e-norm-p90': {
    label: 'interactivity (tok/s/user, InferenceX: 1 / P90 of E2E latency ÷ output tokens)',
    of: (p: PointRow) => p.e2eNormInteractivityP90,
    metric: 'e2eNormInteractivityP90',
  },
  'itl-p50': {
    label: 'interactivity (tok/s/user, p50 = 1 / ITL p50)',
    of: (p: PointRow) => p.interactivityP50,
    metric: 'interactivityP50',
  },
} as const;
export type XAxis = keyof typeof X_AXES;
export const DEFAULT_X_AXIS: XAxis = 'e2e-norm-p90';
export const Y_LABEL = 'throughput per GPU (input + output tok/s/GPU)';
