/**
 * Replay fixtures: histories of finished sweeps, kept per release under
 * fixtures/histories/v<version>/<scenario>.json (docs/compatibility.md). replay.test.ts replays every
 * one with the current workflow code. A test that finishes a scenario records its history into the
 * current version's folder when INFERSWEEP_RECORD_HISTORIES=1, with the workflow id it ran under
 * (`<scenario>.workflow-id`: a workflow whose commands carry its own id, a snapshot starting its
 * child sweeps, replays only under it).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  /**
   * The workflow id it ran under, when its commands carry it (a snapshot's child sweep ids are made
   * of it): `<scenario>.workflow-id` beside the history. Replay runs under this id.
   */
  workflowId?: string;
}

const WORKFLOW_ID_SUFFIX = '.workflow-id';

/** Every stored fixture of every version. */
export function historyFixtures(): HistoryFixture[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && /^v\d+\.\d+\.\d+$/.test(d.name))
    .flatMap((d) =>
      readdirSync(join(root, d.name))
        .filter((f) => f.endsWith('.json'))
        .map((f) => {
          const file = join(root, d.name, f);
          const idFile = file.replace(/\.json$/, WORKFLOW_ID_SUFFIX);
          const workflowId = existsSync(idFile) ? readFileSync(idFile, 'utf8').trim() : undefined;
          return { name: `${d.name}/${f.replace(/\.json$/, '')}`, file, ...(workflowId ? { workflowId } : {}) };
        }),
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
    writeFileSync(join(dir, `${scenario}${WORKFLOW_ID_SUFFIX}`), `${h.workflowId}\n`);
  }
  return history;
}
