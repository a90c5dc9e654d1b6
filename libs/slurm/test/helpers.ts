import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { repoRoot, stackEnv, type StackEnv } from '@infersweep/testkit/stack';
import { SlurmCluster, SshExecutor, type AllocateRequest, type SshExecutorOptions } from '../src/index';

export { repoRoot, stackEnv };

function need(e: StackEnv, k: keyof StackEnv): string {
  const v = e[k];
  if (!v) throw new Error(`stack env has no ${k}: is the stack up (scripts/stack.sh up)?`);
  return v;
}

/** Every job a test creates carries this prefix (other engineers share the cluster). */
export const PREFIX = 'infersweep-test-slurm-';

export function uniqueName(tag: string): string {
  return `${PREFIX}${tag}-${randomUUID().slice(0, 8)}`;
}

/**
 * A test allocation request: one shared node for 5 minutes, granted within 60 s, named
 * `uniqueName(tag)` (or the given jobName); `over` changes what a test is about.
 */
export function allocRequest(tag: string, over: Partial<AllocateRequest> = {}): AllocateRequest {
  return {
    jobName: uniqueName(tag),
    nodes: 1,
    gres: false,
    exclusive: false,
    timeLimitMinutes: 5,
    grantTimeoutSeconds: 60,
    ...over,
  };
}

export function sshOptions(over: Partial<SshExecutorOptions> = {}): SshExecutorOptions {
  const e = stackEnv();
  return {
    host: need(e, 'INFERSWEEP_SSH_HOST'),
    port: Number(need(e, 'INFERSWEEP_SSH_PORT')),
    username: need(e, 'INFERSWEEP_SSH_USER'),
    privateKeyPath: need(e, 'INFERSWEEP_SSH_KEY'),
    hostKey: readFileSync(need(e, 'INFERSWEEP_SSH_HOST_KEY'), 'utf8'),
    keepaliveIntervalMs: 5_000,
    readyTimeoutMs: 10_000,
    ...over,
  };
}

export function sshCluster(): { exec: SshExecutor; cluster: SlurmCluster } {
  const exec = new SshExecutor(sshOptions());
  return { exec, cluster: new SlurmCluster(exec, { pollIntervalMs: 250 }) };
}

export const shared = (): string => need(stackEnv(), 'INFERSWEEP_SHARED');
export const stackDir = (): string => need(stackEnv(), 'INFERSWEEP_STACK');

/**
 * pid of the per-connection sshd process serving `x` (the parent of the remote shell), checked
 * to be a session process (`sshd: user@notty`) and not the listening daemon.
 */
export async function sshSessionPid(x: SshExecutor): Promise<string> {
  const r = await x.run([
    'bash',
    '-c',
    'echo "$PPID"; tr "\\0" " " < "/proc/$PPID/cmdline"; echo; cat "$1"',
    'x',
    join(stackDir(), 'pids', 'sshd.pid'),
  ]);
  const [pid = '', cmd = '', listener = ''] = r.stdout.split('\n').map((l) => l.trim());
  if (!/^\d+$/.test(pid) || !/^sshd: \S+@notty/.test(cmd) || pid === listener)
    throw new Error(`not an sshd session process: ${JSON.stringify(r.stdout)}`);
  return pid;
}
