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
    ).toEqual({ serverCaCertPath: '/ca.pem', clientCertPath: '/c.pem', clientKeyPath: '/c.key', serverName: 'temporal.internal' });
  });

  it('refuses a certificate without its key and a key without its certificate, naming the missing variable', () => {
    const noKey = () => tlsFilesFromEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: '/c.pem' });
    expect(noKey).toThrow(TemporalTlsConfigError);
    expect(noKey).toThrow(/TEMPORAL_TLS_CLIENT_KEY_PATH is not/);
    expect(() => tlsFilesFromEnv({ TEMPORAL_TLS_CLIENT_KEY_PATH: '/c.key' })).toThrow(/TEMPORAL_TLS_CLIENT_CERT_PATH is not/);
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
    expect(t).toMatchObject({ tls: true, namespace: 'infersweep', embedded: false, tlsFiles: { serverCaCertPath: ca } });
    expect(connectionTls(t)?.serverRootCACertificate?.toString()).toBe(PEM('CERTIFICATE'));
  });

  it('TEMPORAL_TLS=true alone means the system CAs; no TLS variable means plain text', () => {
    expect(connectionTls(temporalTarget({ TEMPORAL_ADDRESS: 'x:1', TEMPORAL_TLS: 'true' }))).toEqual({});
    expect(connectionTls(temporalTarget({ TEMPORAL_ADDRESS: 'x:1' }))).toBeUndefined();
  });
});
