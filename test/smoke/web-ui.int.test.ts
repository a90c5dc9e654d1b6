import { describe, expect, it } from 'vitest';
import { stackEnv } from '@infersweep/testkit/stack';

describe('smoke: Temporal Web UI', () => {
  it('answers on its port with the UI page', async () => {
    const res = await fetch(stackEnv().INFERSWEEP_TEMPORAL_UI);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body.toLowerCase()).toContain('<html');
    expect(body).toContain('/_app/immutable/');
  });

  it('serves the namespace API the UI itself uses, listing the default namespace', async () => {
    const res = await fetch(`${stackEnv().INFERSWEEP_TEMPORAL_UI}/api/v1/namespaces`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { namespaces: { namespaceInfo: { name: string } }[] };
    expect(body.namespaces.map((n) => n.namespaceInfo.name)).toContain('default');
  });
});
