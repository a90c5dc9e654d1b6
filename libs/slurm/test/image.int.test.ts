import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { ImageImportError, ImageLockTimeout, imageFileName } from '../src/index';
import { allocRequest, shared, sshCluster, uniqueName } from './helpers';
import { until } from '@infersweep/testkit/wait';

/** Stand-in for `enroot import`: a real squashfs built with mksquashfs, counting its runs. */
const standIn = (counter: string, extra = ''): string[] => [
  'bash',
  '-c',
  `set -e; d=$(mktemp -d); printf "%s" "$2" > "$d/image-name"; echo import >> "$3"; ${extra} mksquashfs "$d" "$1" -noappend -quiet -no-progress >/dev/null; rm -rf "$d"`,
  'stand-in',
  '{out}',
  '{image}',
  counter,
];

describe('importImage: flock, validation, atomic rename (real files, real flock, real mksquashfs)', () => {
  const { exec, cluster } = sshCluster();
  const dir = join(shared(), uniqueName('squash'));
  afterAll(async () => {
    await exec.run(['rm', '-rf', '--', dir]);
    await exec.close();
  });

  const lines = async (f: string): Promise<number> =>
    (await exec.run(['bash', '-c', 'cat -- "$1" 2>/dev/null | wc -l', 'x', f])).stdout.trim() as unknown as number;

  it('two concurrent imports of the same (hostile-named) image: one import, both succeed, file valid', async () => {
    const image = 'evil/$(touch /tmp/infersweep-pwn):tag;`id` "q"';
    const counter = join(dir, 'count-a');
    const req = { image, squashDir: dir, lockTimeoutSeconds: 60, importCommand: standIn(counter, 'sleep 1;') };
    const [a, b] = await Promise.all([cluster.importImage(req), cluster.importImage(req)]);
    expect(a.squashPath).toBe(join(dir, imageFileName(image)));
    expect(b.squashPath).toBe(a.squashPath);
    expect([a.imported, b.imported].sort()).toEqual([false, true]);
    expect(Number(await lines(counter))).toBe(1);
    expect((await exec.run(['unsquashfs', '-l', a.squashPath])).stdout).toContain('image-name');
    const content = await exec.run(['bash', '-c', 'unsquashfs -cat "$1" image-name', 'x', a.squashPath]);
    expect(content.stdout).toBe(image);
    expect((await exec.run(['test', '-e', '/tmp/infersweep-pwn'])).code).toBe(1);
    // only the final file and its lock: no temporary left behind
    expect(
      (await exec.run(['ls', '-A', dir])).stdout.split('\n').filter((f) => f.startsWith(imageFileName(image))),
    ).toEqual([imageFileName(image), `${imageFileName(image)}.lock`]);
  });

  it("on the head node of an allocation (InferenceX's way): the import runs in an srun step there, with ENROOT_CACHE_PATH", async () => {
    const a = await cluster.allocate(allocRequest('imp'));
    try {
      const image = 'head/node:1';
      const seen = join(dir, 'seen-on');
      const req = {
        image,
        squashDir: dir,
        lockTimeoutSeconds: 60,
        importCommand: standIn(
          join(dir, 'count-h'),
          `printf "%s %s %s\\n" "$SLURM_JOB_ID" "$SLURMD_NODENAME" "$ENROOT_CACHE_PATH" > ${seen};`,
        ),
        onNode: { jobId: a.jobId, node: a.headNode, env: { ENROOT_CACHE_PATH: '/tmp/enroot cache' } },
      };
      const r = await cluster.importImage(req);
      expect(r.imported).toBe(true);
      expect((await exec.run(['cat', seen])).stdout.trim()).toBe(`${a.jobId} ${a.headNode} /tmp/enroot cache`);
      // a second call finds the valid file (under the same lock) and does not import again
      expect((await cluster.importImage(req)).imported).toBe(false);
    } finally {
      await cluster.release(a.jobId);
    }
  });

  it('a lock held past the timeout is an ImageLockTimeout, and the import never runs', async () => {
    const image = 'held/lock:1';
    const squash = join(dir, imageFileName(image));
    const counter = join(dir, 'count-b');
    await exec.run(['mkdir', '-p', dir]);
    const holder = new AbortController();
    const held = exec
      .run(['flock', `${squash}.lock`, 'sleep', '60'], { signal: holder.signal })
      .catch((e: unknown) => e);
    try {
      await until(
        'lock held',
        async () => (await exec.run(['flock', '-n', `${squash}.lock`, 'true'])).code === 1,
        10_000,
      );
      const t0 = Date.now();
      const err = await cluster
        .importImage({ image, squashDir: dir, lockTimeoutSeconds: 2, importCommand: standIn(counter) })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ImageLockTimeout);
      expect((err as ImageLockTimeout).kind).toBe('transient');
      expect((err as ImageLockTimeout).context.logTail).toMatch(/lock not acquired within 2s/);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1_900);
      expect(Number(await lines(counter))).toBe(0);
      expect((await exec.run(['test', '-e', squash])).code).toBe(1);
    } finally {
      holder.abort();
      await held;
    }
    // once the lock is free the same call succeeds
    expect(
      (await cluster.importImage({ image, squashDir: dir, lockTimeoutSeconds: 10, importCommand: standIn(counter) }))
        .imported,
    ).toBe(true);
  });

  it('a corrupt existing squash file is replaced; a valid one is reused', async () => {
    const image = 'corrupt/image:2';
    const squash = join(dir, imageFileName(image));
    const counter = join(dir, 'count-c');
    await exec.run(['mkdir', '-p', dir]);
    await exec.run(['bash', '-c', 'head -c 4096 /dev/urandom > "$1"', 'x', squash]);
    expect((await exec.run(['unsquashfs', '-l', squash])).code).not.toBe(0);
    const r = await cluster.importImage({
      image,
      squashDir: dir,
      lockTimeoutSeconds: 10,
      importCommand: standIn(counter),
    });
    expect(r.imported).toBe(true);
    expect((await exec.run(['unsquashfs', '-l', squash])).code).toBe(0);
    const again = await cluster.importImage({
      image,
      squashDir: dir,
      lockTimeoutSeconds: 10,
      importCommand: standIn(counter),
    });
    expect(again.imported).toBe(false);
    expect(Number(await lines(counter))).toBe(1);
  });

  it('a failing or non-squashfs import is an ImageImportError and leaves no file behind', async () => {
    const image = 'broken/import:3';
    const squash = join(dir, imageFileName(image));
    const failing = await cluster
      .importImage({
        image,
        squashDir: dir,
        lockTimeoutSeconds: 10,
        importCommand: ['bash', '-c', 'echo partial > "$1"; echo "network down" >&2; exit 9', 'x', '{out}'],
      })
      .catch((e: unknown) => e);
    expect(failing).toBeInstanceOf(ImageImportError);
    expect((failing as ImageImportError).context.logTail).toMatch(/network down/);
    const garbage = await cluster
      .importImage({
        image,
        squashDir: dir,
        lockTimeoutSeconds: 10,
        importCommand: ['bash', '-c', 'echo not-a-squashfs > "$1"', 'x', '{out}'],
      })
      .catch((e: unknown) => e);
    expect(garbage).toBeInstanceOf(ImageImportError);
    const left = (await exec.run(['ls', '-A', dir])).stdout
      .split('\n')
      .filter((f) => f.startsWith(imageFileName(image)));
    expect(left).toEqual([`${imageFileName(image)}.lock`]);
    expect((await exec.run(['test', '-e', squash])).code).toBe(1);
  });
});
