/**
 * The local stack's image catalog: on the simulator there are no container images, so an image name
 * stands for simulator settings, to give runs of different images different speeds for real
 * (confirmation and bisection, apps/cli/test/confirm-bisect.nightly.test.ts). The worker reads the JSON
 * file `INFERSWEEP_LOCAL_IMAGES` names (scripts/stack.sh writes one with four candidate images) at
 * every launch; a plan whose image the catalog lists launches its simulator with that image's
 * latencies; `slowHost` adds latency to the launches of sweeps whose id starts with a prefix: a slow
 * night of the host, which no run context records. Only plans that launch the simulator are touched.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { InputError } from '@infersweep/core';
import { mapSimulatorLatencies } from './speed';

export const LOCAL_IMAGES_ENV = 'INFERSWEEP_LOCAL_IMAGES';

const latencies = z
  .object({
    timeToFirstTokenMs: z.number().nonnegative().optional(),
    interTokenLatencyMs: z.number().nonnegative().optional(),
  })
  .strict();

export const localImagesSchema = z
  .object({
    /** image name → the simulator's latencies for a plan with that image */
    images: z.record(z.string().min(1), latencies).default({}),
    /** added to the latencies of sweeps whose id starts with `sweepIdPrefix` (a slow host, not an image) */
    slowHost: z
      .array(
        z
          .object({
            sweepIdPrefix: z.string().min(1),
            addTimeToFirstTokenMs: z.number().nonnegative().default(0),
            addInterTokenLatencyMs: z.number().nonnegative().default(0),
          })
          .strict(),
      )
      .default([]),
  })
  .strict();
export type LocalImages = z.infer<typeof localImagesSchema>;

/** The catalog the worker's environment names, or undefined (none named: plans launch as planned). */
export function loadLocalImages(env: NodeJS.ProcessEnv = process.env): LocalImages | undefined {
  const file = env[LOCAL_IMAGES_ENV];
  if (!file) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`${LOCAL_IMAGES_ENV}=${file}: cannot read the local image catalog (${(e as Error).message})`);
  }
  const r = localImagesSchema.safeParse(raw);
  if (!r.success)
    throw new InputError(
      `${LOCAL_IMAGES_ENV}=${file}: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

/**
 * The simulator argv of `image` for sweep `sweepId`: `--time-to-first-token` and `--inter-token-latency`
 * replaced by the catalog's values, plus any slow-host addition. Any other argv is returned as is. Pure.
 */
export function localImageArgv(argv: readonly string[], image: string, sweepId: string, c: LocalImages): string[] {
  const img = c.images[image];
  const slow = c.slowHost.filter((s) => sweepId.startsWith(s.sweepIdPrefix));
  const addTtft = slow.reduce((a, s) => a + s.addTimeToFirstTokenMs, 0);
  const addItl = slow.reduce((a, s) => a + s.addInterTokenLatencyMs, 0);
  return mapSimulatorLatencies(argv, (flag, old) =>
    flag === '--time-to-first-token'
      ? `${(img?.timeToFirstTokenMs ?? old) + addTtft}ms`
      : `${(img?.interTokenLatencyMs ?? old) + addItl}ms`,
  );
}
