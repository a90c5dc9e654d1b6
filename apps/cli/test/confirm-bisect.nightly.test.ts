/**
 * Confirmation and bisection on the real local stack, through `infersweep schedule create` and
 * `schedule trigger` with a worker polling the schedules' queue (in this process, with its own
 * history settings and local image catalog: libs/orchestrator/src/activities/local-images.ts).
 * Two schedules (two series: orientation `latency`, one point each), run side by side, four nightly
 * runs each:
 *  - `bisect-…`: image local/sim:0 (ITL 4 ms) three times, then local/sim:5 (ITL 7 ms): flagged, confirmed
 *    by the paired A/B, and bisected over the four candidate images between local/sim:0 and
 *    local/sim:5 to local/sim:3, which introduced the slowdown; the notification names it.
 *  - `slowhost-…`: local/sim:0 four times, the fourth on a slow night of the host (+2 ms ITL for that
 *    schedule's runs only, not for the A/B): flagged, then cleared by the paired A/B; nothing notifies.
 * Detection settings sized for a short series (3 baseline runs, the fewest the shift test takes, and
 * k = 1); the A/B runs 3 pairs per comparison (t(0.975, 2) = 4.3).
 * Nightly, not per commit: 4 comparisons × 6 arms, each a server start and a point, take 8–13 min on
 * the local stack beside the series' nightly runs (`npm run test:nightly`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { CONFIRM_NOTIFIED_FILE, HISTORY_SETTINGS_ENV, NOTIFIED_FILE, readVerdict } from '@infersweep/history';
import type { ChildSweepOutcome, SweepResult } from '@infersweep/sweep';
import { ResultsLayout } from '@infersweep/core';
import { cli, createLatencySchedule } from '@infersweep/testkit/cli';
import { until } from '@infersweep/testkit/wait';
import {
  cleanupStarted,
  client as temporalClient,
  localSlurm,
  runningWorker,
  track,
  ungatedConfigText,
} from '@infersweep/testkit/sweep-harness';
import { LOCAL_IMAGES_ENV } from '@infersweep/orchestrator';
import { stackEnv } from '@infersweep/testkit/stack';

const slurm = localSlurm();
const tag = randomUUID().slice(0, 8);
const name = `bisect-${tag}`;
const slowName = `slowhost-${tag}`;
const root = join(stackEnv().INFERSWEEP_STACK, '..', 'test-results', name);
const IMAGES = [0, 1, 2, 3, 4, 5].map((i) => `local/sim:${i}`);
/** local/sim:3 introduced the slowdown; the later images keep it */
const ITL: Record<string, number> = Object.fromEntries(IMAGES.map((im, i) => [im, i >= 3 ? 7 : 4]));
const catalogFile = join(root, 'local-images.json');
const notified = join(root, 'notified.json');

/** The catalog; `slowNightly`: the slow-host schedule's own runs (not its A/B) get +2 ms ITL, a slow host. */
function writeCatalog(slowNightly: boolean): void {
  const images = Object.fromEntries(IMAGES.map((im) => [im, { interTokenLatencyMs: ITL[im] }]));
  const slowHost = slowNightly ? [{ sweepIdPrefix: `infersweep-sched-${slowName}`, addInterTokenLatencyMs: 2 }] : [];
  writeFileSync(catalogFile, JSON.stringify({ images, slowHost }));
}

/** The shipped config as series `series`: its name, the image under test, the client-health gate relaxed, 5 s profiles. */
function configFor(series: string, image: string): string {
  const url = new URL('../../../configs/kimik3-fp4-h200.yaml', import.meta.url);
  const shipped = ungatedConfigText(readFileSync(url, 'utf8'), url.pathname);
  for (const s of ['name: kimik3-fp4-h200-agentx', 'image: vllm/vllm-openai:kimi-k3', 'profileDurationSeconds: 10'])
    if (!shipped.includes(s)) throw new Error(`the shipped config no longer has "${s}": update this test`);
  const file = join(root, `config-${series}-${image.replace(/\W/g, '_')}.yaml`);
  writeFileSync(
    file,
    shipped
      .replace('profileDurationSeconds: 10', 'profileDurationSeconds: 5')
      .replace('name: kimik3-fp4-h200-agentx', `name: ${series}`)
      .replace('image: vllm/vllm-openai:kimi-k3', `image: ${image}`),
  );
  return file;
}

describe('a flagged regression on the local stack', () => {
  const queue = `t-bisect-${tag}`;
  let client: Client;
  let worker: { stop(): Promise<void> } | undefined;
  const saved: Record<string, string | undefined> = {};
  const seen = new Set<string>();

  beforeAll(async () => {
    mkdirSync(root, { recursive: true });
    writeCatalog(false);
    const settings = join(root, 'history-settings.yaml');
    writeFileSync(
      settings,
      [
        // its own store: the series of this test only
        `store: ${join(root, 'history.jsonl')}`,
        'detection: { minBaselineRuns: 3, confirmRuns: 1, minRelativeChange: 0.1, metrics: [interactivityP50] }',
        `confirm: { pairs: 3, candidates: { images: [${IMAGES.join(', ')}] } }`,
        `notify: { command: [tee, ${notified}] }`,
        '',
      ].join('\n'),
    );
    for (const [k, v] of [
      [HISTORY_SETTINGS_ENV, settings],
      [LOCAL_IMAGES_ENV, catalogFile],
    ] as const) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    client = await temporalClient();
    worker = await runningWorker(queue);
  });
  afterAll(async () => {
    await cli(['schedule', 'delete', name]);
    await cli(['schedule', 'delete', slowName]);
    await cleanupStarted(slurm);
    await worker?.stop();
    await client?.connection.close();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  /** One nightly run of `schedule` with `image`: the schedule (re)created with it, triggered, followed to its end. */
  async function nightly(schedule: string, image: string): Promise<SweepResult> {
    await cli(['schedule', 'delete', schedule]);
    const c = await createLatencySchedule(schedule, configFor(schedule, image), queue);
    expect(c.code, c.stderr).toBe(0);
    expect((await cli(['schedule', 'trigger', schedule])).code).toBe(0);
    const query = `WorkflowId STARTS_WITH 'infersweep-sched-${schedule}' AND WorkflowType = 'sweepAllWorkflow'`;
    const run = await until(
      'the triggered run',
      async () => {
        for await (const w of client.workflow.list({ query })) if (!seen.has(w.workflowId)) return w;
        return undefined;
      },
      60_000,
    );
    seen.add(run.workflowId);
    const outcomes = (await client.workflow.getHandle(run.workflowId).result()) as ChildSweepOutcome[];
    const child = outcomes[0]!;
    track(client.workflow.getHandle(child.sweepId), child.sweepId);
    expect(child.status, child.error).toBe('completed');
    return child.result!;
  }

  it('clears a slow night of the host, confirms a slower image and bisects it to local/sim:3', async () => {
    const t0 = Date.now();
    const [bad, slow] = await Promise.all([
      (async () => {
        const good = [];
        for (let i = 0; i < 3; i++) good.push(await nightly(name, IMAGES[0]!));
        expect(good.map((r) => [r.regressions, r.confirmation])).toEqual([
          [0, undefined],
          [0, undefined],
          [0, undefined],
        ]);
        return nightly(name, IMAGES[5]!);
      })(),
      (async () => {
        for (let i = 0; i < 3; i++) await nightly(slowName, IMAGES[0]!);
        writeCatalog(true);
        return nightly(slowName, IMAGES[0]!);
      })(),
    ]);
    expect(slow.regressions, slow.message).toBe(1);
    expect(slow.confirmation?.outcome, slow.message).toBe('cleared');
    // a cleared regression notifies no one: neither at the flag nor after the A/B
    expect([NOTIFIED_FILE, CONFIRM_NOTIFIED_FILE].map((f) => existsSync(join(slow.resultsDir, f)))).toEqual([
      false,
      false,
    ]);

    expect(bad.regressions, bad.message).toBe(1);
    expect(bad.confirmation, bad.message).toEqual({
      confirmId: `confirm-${bad.sweepId}`,
      outcome: 'confirmed',
      culprit: 'local/sim:3',
    });
    expect(readVerdict(bad.resultsDir)?.runId).toBe(bad.sweepId);
    const sent = JSON.parse(readFileSync(notified, 'utf8')) as {
      runId: string;
      text: string;
      confirmation: {
        outcome: string;
        culprit: { image: string };
        steps: { step: string; b: string; outcome: string }[];
      };
    };
    expect(sent.runId).toBe(bad.sweepId);
    expect(sent.confirmation.culprit.image).toBe('local/sim:3');
    expect(sent.confirmation.steps.map((s) => [s.b, s.outcome])).toEqual([
      ['local/sim:5', 'confirmed'],
      ['local/sim:2', 'cleared'],
      ['local/sim:3', 'confirmed'],
    ]);
    expect(sent.text).toContain('first bad image: local/sim:3');
    // each arm's stored plan names the image it ran
    const armPlan = (step: string, arm: string) =>
      (
        JSON.parse(
          readFileSync(
            new ResultsLayout(join(dirname(bad.resultsDir), `confirm-${bad.sweepId}`, step, arm)).planFile,
            'utf8',
          ),
        ) as { image: string }
      ).image;
    const nightlyImage = (
      JSON.parse(readFileSync(new ResultsLayout(bad.resultsDir).planFile, 'utf8')) as { image: string }
    ).image;
    expect(nightlyImage).toBe('local/sim:5');
    expect([armPlan('bisect-2', 'pair-1-A'), armPlan('bisect-2', 'pair-1-B')]).toEqual(['local/sim:0', 'local/sim:3']);
    console.log(
      `[measure] two series of 4 nightly runs side by side, 4 paired A/Bs: ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );
  }, 1_500_000);
});
