/**
 * Secret values, resolved on the worker at launch (never earlier: the plan, the workflow input and
 * history carry names only). Each name comes from the worker's environment, else from the cluster's
 * secrets file (`NAME=value` lines, `#` comments, an optional `export `, optional surrounding
 * quotes), which must be private (mode 600) like an SSH key. Errors name variables and files, never
 * a value.
 */
import { readFileSync } from 'node:fs';
import { InputError } from '@infersweep/core';
import { localFileProbe } from './files';
import { isEnvName } from './quote';

/** `NAME=value` lines of a secrets file → map (later lines win). */
export function parseSecretsFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '').trim();
    if (!line || line.startsWith('#')) continue;
    const body = line.replace(/^export\s+/, '');
    const i = body.indexOf('=');
    if (i <= 0) continue;
    const name = body.slice(0, i).trim();
    if (!isEnvName(name)) continue;
    let value = body.slice(i + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]!))
      value = value.slice(1, -1);
    out[name] = value;
  }
  return out;
}

/** The values of `names` (environment first, then `secretsFile`); InputError naming what is missing. */
export function resolveSecrets(
  names: readonly string[],
  secretsFile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  if (names.length === 0) return {};
  const out: Record<string, string> = {};
  let fromFile: Record<string, string> | undefined;
  const file = (): Record<string, string> => {
    if (fromFile) return fromFile;
    if (secretsFile === undefined) return (fromFile = {});
    const st = localFileProbe.stat(secretsFile);
    if (st.kind !== 'file' || !st.readable) {
      throw new InputError(
        `secrets file ${secretsFile} ${st.kind === 'missing' ? `does not exist (${st.error})` : 'is not a readable file'} on the worker's host`,
        { context: { step: 'secrets' } },
      );
    }
    if ((st.mode & 0o077) !== 0) {
      throw new InputError(
        `secrets file ${secretsFile} is accessible by group or others (mode 0${(st.mode & 0o777).toString(8)}): chmod 600 ${secretsFile}`,
        { context: { step: 'secrets' } },
      );
    }
    return (fromFile = parseSecretsFile(readFileSync(secretsFile, 'utf8')));
  };
  const missing: string[] = [];
  for (const n of names) {
    const v = env[n];
    if (v !== undefined && v !== '') out[n] = v;
    else if (file()[n] !== undefined && file()[n] !== '') out[n] = file()[n]!;
    else missing.push(n);
  }
  if (missing.length > 0) {
    throw new InputError(
      `secret${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not found on the worker: set ${missing.length > 1 ? 'them' : 'it'} in the worker's environment${secretsFile ? ` or in ${secretsFile}` : ' or name a secretsFile in the cluster profile'}`,
      { context: { step: 'secrets', missing } },
    );
  }
  return out;
}
