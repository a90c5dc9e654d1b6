import { createHmac } from 'node:crypto';

/** An OpenSSH public key line (`ssh-ed25519 AAAA… [comment]`) → its type and raw key blob. */
export function parsePublicKeyLine(line: string): { type: string; blob: Buffer } {
  const parts = line.trim().split(/\s+/);
  const [type, b64] = parts;
  if (!type || !b64 || !/^[A-Za-z0-9+/]+=*$/.test(b64)) throw new TypeError(`not an OpenSSH public key line: ${JSON.stringify(line.slice(0, 80))}`);
  return { type, blob: Buffer.from(b64, 'base64') };
}

/** The name known_hosts uses for a host: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function hostMatches(pattern: string, name: string): boolean {
  if (pattern.startsWith('|1|')) {
    const [, , salt, hash] = pattern.split('|');
    if (!salt || !hash) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
  }
  return pattern.split(',').some((p) => p === name);
}

/**
 * Keys known_hosts holds for `name` (plain or hashed entries; `@revoked` entries returned
 * separately; wildcard patterns are not honoured, a pinned exact name is required).
 */
export function knownKeysFor(knownHosts: string, name: string): { keys: Buffer[]; revoked: Buffer[] } {
  const keys: Buffer[] = [];
  const revoked: Buffer[] = [];
  for (const raw of knownHosts.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    let fields = line.split(/\s+/);
    let marker: string | undefined;
    if (fields[0]?.startsWith('@')) {
      marker = fields[0];
      fields = fields.slice(1);
    }
    const [hosts, type, b64] = fields;
    if (!hosts || !type || !b64 || !hostMatches(hosts, name)) continue;
    const blob = Buffer.from(b64, 'base64');
    if (marker === '@revoked') revoked.push(blob);
    else if (marker === undefined) keys.push(blob);
  }
  return { keys, revoked };
}

export type HostKeyVerdict = { ok: true } | { ok: false; why: 'unknown' | 'changed' | 'revoked' };

/** Decide whether the key the server offered is acceptable. */
export function verifyHostKey(offered: Buffer, known: { keys: Buffer[]; revoked?: Buffer[] }): HostKeyVerdict {
  if (known.revoked?.some((k) => k.equals(offered))) return { ok: false, why: 'revoked' };
  if (known.keys.length === 0) return { ok: false, why: 'unknown' };
  return known.keys.some((k) => k.equals(offered)) ? { ok: true } : { ok: false, why: 'changed' };
}
