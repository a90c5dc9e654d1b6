import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TemporalTlsConfigError, loadTlsConfig, tlsFilesFromEnv } from '../src/temporal-tls';
import { connectionTls, temporalTarget } from '../src/connection';

const PEM = (label: string) => `-----BEGIN ${label}-----\nAAAA\n-----END ${label}-----\n`;

describe('tlsFilesFromEnv', () => {
  it('is undefined when no TLS file variable is set (blank counts as unset)', () => {
    expect(tlsFilesFromEnv({})).toBeUndefined();
    expect(tlsFilesFromEnv({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: ' ' })).toBeUndefined();
  });

  it('reads the CA, the client pair and the server name', () => {
    expect(
      tlsFilesFromEnv({
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/ca.pem',
        TEMPORAL_TLS_CLIENT_CERT_PATH: '/c.pem',
        TEMPORAL_TLS_CLIENT_KEY_PATH: '/c.key',
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      }),
    ).toEqual({
      serverCaCertPath: '/ca.pem',
      clientCertPath: '/c.pem',
      clientKeyPath: '/c.key',
      serverName: 'temporal.internal',
    });
  });

  it('refuses a certificate without its key and a key without its certificate, naming the missing variable', () => {
    const noKey = () => tlsFilesFromEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: '/c.pem' });
    expect(noKey).toThrow(TemporalTlsConfigError);
    expect(noKey).toThrow(/TEMPORAL_TLS_CLIENT_KEY_PATH is not/);
    expect(() => tlsFilesFromEnv({ TEMPORAL_TLS_CLIENT_KEY_PATH: '/c.key' })).toThrow(
      /TEMPORAL_TLS_CLIENT_CERT_PATH is not/,
    );
  });
});

describe('loadTlsConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'infersweep-tls-'));
  const ca = join(dir, 'ca.pem');
  const crt = join(dir, 'c.pem');
  const key = join(dir, 'c.key');
  const junk = join(dir, 'junk.pem');
  writeFileSync(ca, PEM('CERTIFICATE'));
  writeFileSync(crt, PEM('CERTIFICATE'));
  writeFileSync(key, PEM('PRIVATE KEY'));
  writeFileSync(junk, 'not a certificate');

  it('is empty (system CAs) without files', () => {
    expect(loadTlsConfig(undefined)).toEqual({});
  });

  it('loads the files into the SDK options', () => {
    const t = loadTlsConfig({ serverCaCertPath: ca, clientCertPath: crt, clientKeyPath: key, serverName: 'localhost' });
    expect(t.serverRootCACertificate?.toString()).toBe(PEM('CERTIFICATE'));
    expect(t.clientCertPair?.key.toString()).toBe(PEM('PRIVATE KEY'));
    expect(t.serverNameOverride).toBe('localhost');
  });

  it('names the variable, the path and the fix for an unreadable or non-PEM file', () => {
    const missing = join(dir, 'nope.pem');
    expect(() => loadTlsConfig({ serverCaCertPath: missing })).toThrow(
      `TEMPORAL_TLS_SERVER_CA_CERT_PATH=${missing}: cannot read the server CA certificate`,
    );
    expect(() => loadTlsConfig({ clientCertPath: junk, clientKeyPath: key })).toThrow(
      `TEMPORAL_TLS_CLIENT_CERT_PATH=${junk}: not a PEM file`,
    );
  });
});

describe('temporalTarget with TLS variables', () => {
  it('turns TLS on for a private CA or a client certificate, and loads them for the connection', () => {
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-tls-'));
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, PEM('CERTIFICATE'));
    const t = temporalTarget({
      TEMPORAL_ADDRESS: 'temporal.lab:7233',
      TEMPORAL_NAMESPACE: 'infersweep',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca,
    });
    expect(t).toMatchObject({
      tls: true,
      namespace: 'infersweep',
      embedded: false,
      tlsFiles: { serverCaCertPath: ca },
    });
    expect(connectionTls(t)?.serverRootCACertificate?.toString()).toBe(PEM('CERTIFICATE'));
  });

  it('TEMPORAL_TLS=true alone means the system CAs; no TLS variable means plain text', () => {
    expect(connectionTls(temporalTarget({ TEMPORAL_ADDRESS: 'x:1', TEMPORAL_TLS: 'true' }))).toEqual({});
    expect(connectionTls(temporalTarget({ TEMPORAL_ADDRESS: 'x:1' }))).toBeUndefined();
  });
});

/**
 * The connection settings are read by @temporalio/envconfig 1.24.0 (the version of the other
 * @temporalio packages): environment variables over a TOML profile (TEMPORAL_CONFIG_FILE,
 * TEMPORAL_PROFILE), TEMPORAL_TLS as on/off (lib/envconfig-toml.js `applyProfileEnvVars`,
 * `getTLSFromEnvVars` in the published package).
 */
describe('temporalTarget through @temporalio/envconfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'infersweep-envconfig-'));
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, PEM('CERTIFICATE'));
  const toml = join(dir, 'temporal.toml');
  writeFileSync(
    toml,
    [
      '[profile.default]',
      'address = "default.lab:7233"',
      '[profile.lab]',
      'address = "temporal.lab:7233"',
      'namespace = "sweeps"',
      '[profile.lab.tls]',
      `server_ca_cert_path = "${ca}"`,
      'server_name = "temporal.internal"',
    ].join('\n'),
  );

  it('a TOML profile chosen by TEMPORAL_PROFILE gives the address, namespace and TLS files', () => {
    const t = temporalTarget({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'lab' });
    expect(t).toMatchObject({
      address: 'temporal.lab:7233',
      namespace: 'sweeps',
      tls: true,
      embedded: false,
      tlsFiles: { serverCaCertPath: ca, serverName: 'temporal.internal' },
    });
    expect(connectionTls(t)?.serverNameOverride).toBe('temporal.internal');
    expect(temporalTarget({ TEMPORAL_CONFIG_FILE: toml }).address).toBe('default.lab:7233');
  });

  it('environment variables win over the profile', () => {
    const t = temporalTarget({
      TEMPORAL_CONFIG_FILE: toml,
      TEMPORAL_PROFILE: 'lab',
      TEMPORAL_ADDRESS: 'other:7233',
      TEMPORAL_NAMESPACE: 'n',
    });
    expect([t.address, t.namespace, t.tlsFiles?.serverCaCertPath]).toEqual(['other:7233', 'n', ca]);
  });

  it('TEMPORAL_TLS=false turns TLS off even with an API key; an API key alone turns it on', () => {
    expect(temporalTarget({ TEMPORAL_ADDRESS: 'x:1', TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).tls).toBe(false);
    expect(temporalTarget({ TEMPORAL_ADDRESS: 'x:1', TEMPORAL_API_KEY: 'k' })).toMatchObject({
      tls: true,
      apiKey: 'k',
    });
  });

  it('a profile named but not in the file is refused; inline PEM data is refused with the file variable to use', () => {
    expect(() => temporalTarget({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'nope' })).toThrow(
      /Profile 'nope' not found/,
    );
    const inline = () =>
      temporalTarget({ TEMPORAL_ADDRESS: 'x:1', TEMPORAL_TLS_SERVER_CA_CERT_DATA: PEM('CERTIFICATE') });
    expect(inline).toThrow(TemporalTlsConfigError);
    expect(inline).toThrow(/write the PEM to a file and set TEMPORAL_TLS_SERVER_CA_CERT_PATH/);
  });

  it('without an address anywhere the target is the embedded local stack', () => {
    expect(temporalTarget({ TEMPORAL_CONFIG_FILE: join(dir, 'absent.toml'), TEMPORAL_NAMESPACE: 'n' })).toMatchObject({
      embedded: true,
      namespace: 'n',
      tls: false,
    });
  });
});
