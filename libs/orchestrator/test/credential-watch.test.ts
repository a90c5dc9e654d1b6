/**
 * Rotated Temporal credentials reach a running worker (../src/credential-watch.ts): a new API key in
 * the TOML profile is handed over, new TLS files stop the worker for a restart, and a file caught
 * mid-rotation is reported and tried again, never taken as the new credentials. Real files, re-read
 * through the same envconfig path the worker connects with.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCredentials, watchCredentials } from '../src/credential-watch';
import { temporalTarget } from '../src/connection';

const PEM = (label: string, body: string) => `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;

function site() {
  const dir = mkdtempSync(join(tmpdir(), 'infersweep-rotation-'));
  const toml = join(dir, 'temporal.toml');
  const crt = join(dir, 'client.pem');
  const key = join(dir, 'client.key');
  const profile = (apiKey: string) =>
    writeFileSync(
      toml,
      [
        '[profile.default]',
        'address = "temporal.lab:7233"',
        `api_key = "${apiKey}"`,
        '[profile.default.tls]',
        `client_cert_path = "${crt}"`,
        `client_key_path = "${key}"`,
      ].join('\n'),
    );
  profile('key-1');
  writeFileSync(crt, PEM('CERTIFICATE', 'AAAA'));
  writeFileSync(key, PEM('PRIVATE KEY', 'BBBB'));
  const env = { TEMPORAL_CONFIG_FILE: toml };
  return { env, crt, key, profile, initial: readCredentials(temporalTarget(env)) };
}

/** The first event the watch reports, and the watch stopped. */
function firstEvent(s: ReturnType<typeof site>): Promise<{ kind: string; value?: unknown }> {
  return new Promise((resolve) => {
    const stop = watchCredentials(
      s.initial,
      {
        onApiKey: (k) => (stop(), resolve({ kind: 'api-key', value: k })),
        onTlsChanged: () => (stop(), resolve({ kind: 'tls' })),
        onError: (e) => (stop(), resolve({ kind: 'error', value: e })),
      },
      { everyMs: 20, env: s.env },
    );
  });
}

describe('Temporal credential rotation on a running worker', () => {
  it('a new API key in the profile is handed to the connection', async () => {
    const s = site();
    expect(s.initial.apiKey).toBe('key-1');
    const event = firstEvent(s);
    s.profile('key-2');
    await expect(event).resolves.toEqual({ kind: 'api-key', value: 'key-2' });
  });

  it('a rotated client certificate stops the worker for a restart', async () => {
    const s = site();
    const event = firstEvent(s);
    writeFileSync(s.crt, PEM('CERTIFICATE', 'CCCC'));
    await expect(event).resolves.toEqual({ kind: 'tls' });
  });

  it('a key file missing mid-rotation is an error to retry, not new credentials', async () => {
    const s = site();
    const event = firstEvent(s);
    rmSync(s.key);
    const e = await event;
    expect(e.kind).toBe('error');
    expect(String(e.value)).toMatch(/TEMPORAL_TLS_CLIENT_KEY_PATH=.*cannot read the client key/);
  });
});
