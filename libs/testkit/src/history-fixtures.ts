/**
 * Replay fixtures: histories of finished sweeps, kept per release under
 * fixtures/histories/v<version>/<scenario>.json (docs/compatibility.md). replay.test.ts replays every
 * one with the current workflow code. A test that finishes a scenario records its history into the
 * current version's folder when INFERSWEEP_RECORD_HISTORIES=1.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { WorkflowHandle } from '@temporalio/client';
import { repoRoot } from '@infersweep/core';

const root = join(repoRoot, 'libs', 'orchestrator', 'test', 'fixtures', 'histories');

/** The release being recorded: the repository's package version. */
export const RECORDING_VERSION = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
).version;

export interface HistoryFixture {
  /** e.g. `v0.1.0/happy-path` */
  name: string;
  file: string;
}

/** Every stored fixture of every version. */
export function historyFixtures(): HistoryFixture[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && /^v\d+\.\d+\.\d+$/.test(d.name))
    .flatMap((d) =>
      readdirSync(join(root, d.name))
        .filter((f) => f.endsWith('.json'))
        .map((f) => ({ name: `${d.name}/${f.replace(/\.json$/, '')}`, file: join(root, d.name, f) })),
    );
}

/** The history of a finished sweep; recorded as this version's fixture `scenario` when INFERSWEEP_RECORD_HISTORIES=1. */
export async function recordHistory(
  h: WorkflowHandle,
  scenario: string,
): Promise<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>> {
  const history = await h.fetchHistory();
  if (process.env.INFERSWEEP_RECORD_HISTORIES === '1') {
    const dir = join(root, `v${RECORDING_VERSION}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${scenario}.json`), historyToJSON(history));
  }
  return history;
}
