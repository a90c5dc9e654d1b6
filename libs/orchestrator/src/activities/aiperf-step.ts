/**
 * aiperf on the allocation's head node (`agentx.aiperf.runOn: head-node`, InferenceX's way): the same argv
 * as an `srun --overlap` step (libs/slurm launchStep: inside the container under pyxis, a host step
 * otherwise), output and artifacts on the cluster's shared storage under remoteAiperfPointDir, copied back
 * into the point folder when the step ends; stopped by scancel on abort or at the hard timeout.
 */
import { constants as fsConstants } from 'node:fs';
import { mkdir, open, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { log } from '@temporalio/activity';
import { remoteAiperfPointDir } from '@infersweep/core';
import { AIPERF_WRAPPER, parseTimes, wrapperExitCode, type AiperfCommand, type AiperfRunner } from '@infersweep/agentx';
import {
  CommandFailedError,
  LOGIN_ENV,
  cappedCatArgv,
  imageFileName,
  sleep,
  type SlurmCluster,
  type StepHandle,
} from '@infersweep/slurm';
import type { SweepPlan } from '@infersweep/topology';
import type { Deployment } from './types';

/** Artifacts aiperf writes as text (the exports the record and InferenceX read, its CSVs and logs). */
const TEXT_ARTIFACT = /\.(json|jsonl|csv|log|txt)$/;
const PUT_SCRIPT = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"';
// NUL-separated: a file name may hold a newline; -type f lists no symlinks and find descends into none
const FIND_SCRIPT = '[ -d "$1" ] && find "$1" -type f -printf "%P\\0"';

export interface HeadNodeRunnerInput {
  slurm: SlurmCluster;
  plan: SweepPlan;
  deployment: Pick<Deployment, 'jobId' | 'headNode'>;
  sweepId: string;
  concurrency: number;
  pollMs: number;
}

export function headNodeAiperfRunner(i: HeadNodeRunnerInput): AiperfRunner {
  const dir = remoteAiperfPointDir(i.plan.sharedDir, i.sweepId, i.concurrency);
  return {
    artifactDir: `${dir}/aiperf_artifacts`,
    stage: (local) => stageTraces(i.slurm, local, `${dir}/traces`),
    run: (cmd) => runStep(i, dir, cmd),
  };
}

/** Copy a local trace file or folder to `remote` (over the executor, file by file on stdin); the path aiperf gets. */
async function stageTraces(slurm: SlurmCluster, local: string, remote: string): Promise<string> {
  const isDir = (await stat(local)).isDirectory();
  const files = isDir ? (await readdir(local, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()) : [];
  const pairs = isDir
    ? files.map((e) => ({
        from: join(e.parentPath, e.name),
        to: `${remote}/${relative(local, join(e.parentPath, e.name))}`,
      }))
    : [{ from: local, to: `${remote}/${basename(local)}` }];
  for (const p of pairs) {
    const r = await slurm.exec.run(['bash', '-c', PUT_SCRIPT, 'infersweep-put', p.to], {
      stdin: await readFile(p.from, 'utf8'),
      timeoutMs: 120_000,
      idempotent: true,
    });
    if (r.code !== 0)
      throw new CommandFailedError(`staging ${p.from} to ${p.to} failed (rc=${r.code})`, {
        kind: 'transient',
        context: { step: 'aiperf:stage', logTail: r.stderr },
      });
  }
  return isDir ? remote : pairs[0]!.to;
}

async function runStep(i: HeadNodeRunnerInput, dir: string, cmd: AiperfCommand) {
  const { slurm, plan } = i;
  const remoteArtifacts = `${dir}/aiperf_artifacts`;
  // an earlier attempt's artifacts must not pass for this run's
  await slurm.exec.run(['rm', '-rf', '--', remoteArtifacts], { timeoutMs: 60_000, idempotent: true });
  const t0 = performance.now();
  const pyxis = plan.slurm.containerRuntime === 'pyxis';
  const handle = await slurm.launchStep(
    i.deployment.jobId,
    i.deployment.headNode,
    [...AIPERF_WRAPPER, cmd.binary, ...cmd.argv],
    cmd.env,
    `${dir}/benchmark.log`,
    {
      runtime: plan.slurm.containerRuntime,
      containerImage: pyxis
        ? join(plan.slurm.squashDir ?? join(plan.sharedDir, 'squash'), imageFileName(plan.image))
        : undefined,
      containerMounts: plan.slurm.mounts,
      stepName: `infersweep-aiperf-c${i.concurrency}`,
      // the step gets the listed env and only the login's paths and locale, never the whole environment
      isolateEnv: true,
      loginEnv: LOGIN_ENV,
    },
  );
  const aborted = await untilStepExits(slurm, handle, cmd, i.pollMs);
  await copyRemoteFile(slurm, handle.logFile, cmd.logFile);
  const log = await readFile(cmd.logFile, 'utf8');
  await copyArtifacts(slurm, remoteArtifacts, cmd.artifactDir);
  const logTail = log.slice(-20_000);
  return {
    exitCode: wrapperExitCode(logTail),
    wallSeconds: (performance.now() - t0) / 1000,
    childCpuSeconds: parseTimes(logTail),
    logTail,
    aborted,
  };
}

/** Poll the step until it is gone, feeding its log tail to onLog; scancel it on abort or at the hard timeout. */
async function untilStepExits(
  slurm: SlurmCluster,
  h: StepHandle,
  cmd: AiperfCommand,
  pollMs: number,
): Promise<boolean> {
  const deadline = Date.now() + cmd.hardTimeoutMs;
  for (;;) {
    if (cmd.signal?.aborted || Date.now() > deadline) {
      await slurm.stopStep(h);
      return cmd.signal?.aborted ?? false;
    }
    if ((await slurm.stepStatus(h)) === 'exited') return false;
    const [t] = await slurm.fetchLogs([h], { tailLines: 20 }).catch(() => []);
    if (t?.tail) cmd.onLog?.(t.tail);
    await sleep(pollMs, cmd.signal);
  }
}

/** Stream one remote text file into `local` (capped at 1 GiB). */
async function copyRemoteFile(slurm: SlurmCluster, remote: string, local: string): Promise<void> {
  await mkdir(dirname(local), { recursive: true });
  // never through a symlink at the target: the file is written where its path says, or not at all
  const file = (
    await open(local, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | fsConstants.O_NOFOLLOW)
  ).createWriteStream();
  const r = await slurm.exec.run(cappedCatArgv(remote, 1024 ** 3), {
    timeoutMs: 300_000,
    idempotent: true,
    collectStdout: false,
    onStdout: (chunk) => file.write(chunk),
  });
  await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
  if (r.code !== 0 && r.code !== 66)
    throw new CommandFailedError(`copying ${remote} failed (rc=${r.code})`, {
      kind: 'transient',
      context: { step: 'aiperf:copy', logTail: r.stderr },
    });
}

/**
 * The artifact names a head-node listing may copy back: text artifacts whose relative path stays in
 * the artifact folder (not empty, not absolute, no `.` or `..` segment, no control character). The
 * listing comes from the cluster, which code of the sweep input can write to: a name is data, never
 * a path to follow. `refused`: the names left out (the caller warns).
 */
export function artifactNames(listing: string): { names: string[]; refused: string[] } {
  const names: string[] = [];
  const refused: string[] = [];
  for (const f of listing.split('\0')) {
    if (f === '' || !TEXT_ARTIFACT.test(f)) continue;
    const segments = f.split('/');
    const hostile =
      /[\x00-\x1f\x7f\\]/.test(f) || f.startsWith('/') || segments.some((x) => x === '' || x === '.' || x === '..');
    (hostile ? refused : names).push(f);
  }
  return { names, refused };
}

/**
 * Where artifact `name` is written under `localDir`: inside it by path and, once its parent folder
 * exists, by real path (a symlinked folder inside `localDir` cannot lead out); else a refusal.
 */
export async function localArtifactPath(localDir: string, name: string): Promise<string> {
  const target = resolve(localDir, name);
  const rel = relative(resolve(localDir), target);
  const outside = (r: string) => r === '' || r.startsWith(`..${sep}`) || r === '..' || isAbsolute(r);
  if (outside(rel)) throw new Error(`artifact ${JSON.stringify(name)} would be written outside ${localDir}`);
  await mkdir(dirname(target), { recursive: true });
  const realRel = relative(await realpath(localDir), join(await realpath(dirname(target)), basename(target)));
  if (outside(realRel))
    throw new Error(`artifact ${JSON.stringify(name)} would be written outside ${localDir} (through a symlink)`);
  return target;
}

/** Copy the text artifacts aiperf wrote on the cluster into the local point folder; hostile names are left out, with a warning. */
async function copyArtifacts(slurm: SlurmCluster, remoteDir: string, localDir: string): Promise<void> {
  const r = await slurm.exec.run(['bash', '-c', FIND_SCRIPT, 'infersweep-find', remoteDir], {
    timeoutMs: 60_000,
    idempotent: true,
  });
  const { names, refused } = artifactNames(r.code === 0 ? r.stdout : '');
  const skipped = [...refused];
  await mkdir(localDir, { recursive: true });
  for (const f of names) {
    const local = await localArtifactPath(localDir, f).catch(() => undefined);
    if (local) await copyRemoteFile(slurm, `${remoteDir}/${f}`, local);
    else skipped.push(f);
  }
  if (skipped.length > 0)
    log.warn(`aiperf artifacts not copied (their names lead out of ${localDir})`, {
      names: skipped.slice(0, 10).map((n) => JSON.stringify(n.slice(0, 200))),
      count: skipped.length,
    });
}
