import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Client, utils } from 'ssh2';
import { stackEnv } from '@infersweep/testkit/stack';

interface Exec {
  code: number | null;
  stdout: string;
  stderr: string;
}

function connect(hostKeyLine: string): Promise<Client> {
  const env = stackEnv();
  const pinned = Buffer.from(hostKeyLine.trim().split(/\s+/)[1]!, 'base64');
  return new Promise((resolve, reject) => {
    const c = new Client();
    c.on('ready', () => resolve(c)).on('error', reject);
    c.connect({
      host: env.INFERSWEEP_SSH_HOST,
      port: Number(env.INFERSWEEP_SSH_PORT),
      username: env.INFERSWEEP_SSH_USER,
      privateKey: readFileSync(env.INFERSWEEP_SSH_KEY),
      hostVerifier: (key: Buffer) => key.equals(pinned),
      readyTimeout: 10_000,
    });
  });
}

function exec(c: Client, cmd: string): Promise<Exec> {
  return new Promise((resolve, reject) => {
    c.exec(cmd, (err, stream) => {
      if (err) return reject(err);
      let stdout = '';
      let stderr = '';
      stream.on('data', (d: Buffer) => (stdout += d.toString()));
      stream.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      stream.on('close', (code: number | null) => resolve({ code, stdout, stderr }));
    });
  });
}

describe('smoke: Slurm over ssh2 to the loopback login node', () => {
  it('refuses a host key that is not the pinned one', async () => {
    const other = utils.generateKeyPairSync('ed25519');
    await expect(connect(other.public)).rejects.toThrow(/verification|host key|Handshake/i);
  });

  it('salloc --no-shell for 2 nodes, squeue shows it RUNNING on two named nodes, scancel ends it', async () => {
    const env = stackEnv();
    const c = await connect(readFileSync(env.INFERSWEEP_SSH_HOST_KEY, 'utf8'));
    const name = `infersweep-smoke-${randomUUID().slice(0, 8)}`;
    let jobId: string | undefined;
    try {
      const alloc = await exec(c, `timeout 60 salloc --no-shell --nodes=2 --time=5 --job-name=${name}`);
      expect(alloc.code).toBe(0);
      jobId = /Granted job allocation (\d+)/.exec(alloc.stderr)?.[1];
      expect(jobId).toMatch(/^\d+$/);

      const q = await exec(c, `squeue -j ${jobId} -h -o '%T %N'`);
      const [state, nodelist] = q.stdout.trim().split(' ');
      expect(state).toBe('RUNNING');
      const hosts = (await exec(c, `scontrol show hostnames ${nodelist}`)).stdout.trim().split('\n');
      expect(hosts).toHaveLength(2);
      for (const h of hosts) expect(h).toMatch(/^node\d+$/);

      expect((await exec(c, `scancel ${jobId}`)).code).toBe(0);
      let final = '';
      for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
        final = (await exec(c, `squeue -j ${jobId} -t all -h -o '%T'`)).stdout.trim();
        if (final === 'CANCELLED') break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(final).toBe('CANCELLED');
      jobId = undefined;
    } finally {
      if (jobId) await exec(c, `scancel ${jobId}`);
      c.end();
    }
  });
});
