import { createHmac } from 'node:crypto';

/**
 * An OpenSSH public key line (`ssh-ed25519 AAAA… [comment]`) → its type and raw key blob. The error
 * never quotes the text: it may be the head of any file a pinned-key path named.
 */
export function parsePublicKeyLine(line: string): { type: string; blob: Buffer } {
  const parts = line.trim().split(/\s+/);
  const [type, b64] = parts;
  if (!type || !b64 || !/^[A-Za-z0-9+/]+=*$/.test(b64))
    throw new TypeError(
      `not an OpenSSH public key line (${line.length} characters; expected "<type> <base64 key> [comment]", e.g. ssh-ed25519 AAAA…)`,
    );
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

/** OpenSSH host pattern (`*`, `?`, `!negation`) against a name: for diagnostics only, never to trust a key. */
function patternMatches(patterns: string, name: string): boolean {
  let hit = false;
  for (const p of patterns.split(',')) {
    const neg = p.startsWith('!');
    const glob = neg ? p.slice(1) : p;
    const re = new RegExp(
      `^${glob
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    const bare = name.replace(/^\[([^\]]+)\]:\d+$/, '$1');
    if (re.test(name) || re.test(bare)) {
      if (neg) return false;
      hit = true;
    }
  }
  return hit;
}

export interface KnownHostKeys {
  keys: Buffer[];
  revoked: Buffer[];
  /**
   * Entries that would cover this host but that infersweep does not trust: `@cert-authority`
   * lines (ssh2 negotiates no host certificates, so a CA can never vouch for the key it gets) and
   * wildcard patterns. Only used to explain a refusal.
   */
  untrusted: { certAuthority: number; wildcard: number };
}

/**
 * Keys known_hosts holds for `name` (plain or hashed entries; `@revoked` entries returned
 * separately). Fail-closed: wildcard patterns and `@cert-authority` lines are not honoured (a
 * pinned exact name and key is required); they are counted in `untrusted` so the refusal says why.
 */
export function knownKeysFor(knownHosts: string, name: string): KnownHostKeys {
  const keys: Buffer[] = [];
  const revoked: Buffer[] = [];
  const untrusted = { certAuthority: 0, wildcard: 0 };
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
    if (!hosts || !type || !b64) continue;
    if (!hostMatches(hosts, name)) {
      if (/[*?]/.test(hosts) && patternMatches(hosts, name)) {
        if (marker === '@cert-authority') untrusted.certAuthority += 1;
        else if (marker === undefined) untrusted.wildcard += 1;
      }
      continue;
    }
    if (marker === '@cert-authority') {
      untrusted.certAuthority += 1;
      continue;
    }
    const blob = Buffer.from(b64, 'base64');
    if (marker === '@revoked') revoked.push(blob);
    else if (marker === undefined) keys.push(blob);
  }
  return { keys, revoked, untrusted };
}

/** Why a host known_hosts does not list is refused, when it has entries infersweep does not honour. */
export function untrustedHint(
  known: Pick<KnownHostKeys, 'untrusted'> | { untrusted?: undefined },
  host: string,
  port: number,
): string {
  const u = known.untrusted;
  if (!u) return '';
  const keyscan = `add the host's own key line (ssh-keyscan -p ${port} ${host}, checked against the fingerprint your site publishes) or set loginHost.hostKey`;
  if (u.certAuthority > 0) {
    return `; known_hosts vouches for it only through an @cert-authority line (SSH host certificates), which infersweep's SSH client (ssh2) cannot verify and so refuses: ${keyscan}`;
  }
  if (u.wildcard > 0)
    return `; known_hosts matches it only through a wildcard pattern, which infersweep does not honour: ${keyscan}`;
  return '';
}

export type HostKeyVerdict = { ok: true } | { ok: false; why: 'unknown' | 'changed' | 'revoked' };

/** Decide whether the key the server offered is acceptable. */
export function verifyHostKey(offered: Buffer, known: { keys: Buffer[]; revoked?: Buffer[] }): HostKeyVerdict {
  if (known.revoked?.some((k) => k.equals(offered))) return { ok: false, why: 'revoked' };
  if (known.keys.length === 0) return { ok: false, why: 'unknown' };
  return known.keys.some((k) => k.equals(offered)) ? { ok: true } : { ok: false, why: 'changed' };
}
