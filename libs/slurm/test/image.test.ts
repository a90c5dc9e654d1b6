import { describe, expect, it } from 'vitest';
import { IMPORT_EXIT, ImageLockTimeout, ImageMissingError, importImage } from '../src/index';
import { ScriptedExecutor } from './scripted-executor';

const req = { image: 'vllm/vllm-openai:v0.11.0', squashDir: '/shared/squash', lockTimeoutSeconds: 5 };

describe('image import', () => {
  it('a relative squash folder is refused before anything runs', async () => {
    const exec = new ScriptedExecutor(() => ({}));
    await expect(importImage({ exec }, { ...req, squashDir: 'squash' })).rejects.toBeInstanceOf(TypeError);
    expect(exec.ran).toHaveLength(0);
  });

  it('reports a fresh import, a lock not acquired in time and a missing image each as itself', async () => {
    const ok = await importImage(
      { exec: new ScriptedExecutor(() => ({ stdout: 'infersweep-image: imported\n' })) },
      req,
    );
    expect(ok).toMatchObject({ imported: true, squashPath: expect.stringMatching(/^\/shared\/squash\/.+\.sqsh$/) });
    await expect(
      importImage({ exec: new ScriptedExecutor(() => ({ code: IMPORT_EXIT.lockTimeout })) }, req),
    ).rejects.toBeInstanceOf(ImageLockTimeout);
    const missing = new ScriptedExecutor(() => ({
      code: IMPORT_EXIT.importFailed,
      stderr: '[ERROR] URL https://registry-1.docker.io returned error code: 404 Not Found',
    }));
    await expect(importImage({ exec: missing }, req)).rejects.toBeInstanceOf(ImageMissingError);
  });
});
