import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { knownHostsName, knownKeysFor, parsePublicKeyLine, verifyHostKey } from '../src/index';

const K1 = 'AAAAC3NzaC1lZDI1NTE5AAAAIHh0ZXN0a2V5MXh0ZXN0a2V5MXh0ZXN0a2V5MXg=';
const K2 = 'AAAAC3NzaC1lZDI1NTE5AAAAIGh0ZXN0a2V5Mmh0ZXN0a2V5Mmh0ZXN0a2V5Mmg=';
const blob = (b64: string): Buffer => Buffer.from(b64, 'base64');

describe('host keys', () => {
  it('parses an OpenSSH public key line', () => {
    const k = parsePublicKeyLine(`ssh-ed25519 ${K1} infersweep-host\n`);
    expect(k.type).toBe('ssh-ed25519');
    expect(k.blob.equals(blob(K1))).toBe(true);
    expect(() => parsePublicKeyLine('garbage')).toThrow(TypeError);
  });

  it('names hosts like OpenSSH', () => {
    expect(knownHostsName('h', 22)).toBe('h');
    expect(knownHostsName('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
  });

  it('finds plain, comma-listed and hashed entries; ignores others; separates @revoked', () => {
    const salt = Buffer.from('0123456789abcdef0123');
    const hash = createHmac('sha1', salt).update('[10.0.0.5]:2222').digest('base64');
    const text = [
      '# comment',
      `[127.0.0.1]:2222 ssh-ed25519 ${K1}`,
      `other,[127.0.0.2]:2222 ssh-ed25519 ${K2}`,
      `|1|${salt.toString('base64')}|${hash} ssh-ed25519 ${K2}`,
      `@revoked [127.0.0.1]:2222 ssh-ed25519 ${K2}`,
      `@cert-authority * ssh-ed25519 ${K2}`,
    ].join('\n');
    expect(knownKeysFor(text, '[127.0.0.1]:2222').keys.map((b) => b.toString('base64'))).toEqual([K1]);
    expect(knownKeysFor(text, '[127.0.0.1]:2222').revoked.map((b) => b.toString('base64'))).toEqual([K2]);
    expect(knownKeysFor(text, '[127.0.0.2]:2222').keys).toHaveLength(1);
    expect(knownKeysFor(text, '[10.0.0.5]:2222').keys.map((b) => b.toString('base64'))).toEqual([K2]);
    expect(knownKeysFor(text, 'nowhere').keys).toEqual([]);
  });

  it('verdicts: ok, unknown, changed, revoked', () => {
    expect(verifyHostKey(blob(K1), { keys: [blob(K1)] })).toEqual({ ok: true });
    expect(verifyHostKey(blob(K1), { keys: [] })).toEqual({ ok: false, why: 'unknown' });
    expect(verifyHostKey(blob(K1), { keys: [blob(K2)] })).toEqual({ ok: false, why: 'changed' });
    expect(verifyHostKey(blob(K1), { keys: [blob(K1)], revoked: [blob(K1)] })).toEqual({ ok: false, why: 'revoked' });
  });
});
