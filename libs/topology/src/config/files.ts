/**
 * Plan-time checks of the files a cluster profile names on the worker's host: the SSH private
 * key, the pinned host key or known_hosts, the secrets file. Pure: the caller passes a probe
 * (the CLI and the worker use the real filesystem). Every problem is a ConfigIssue with the YAML
 * line, so `plan`/`sweep` exit 2 before anything starts, instead of an SSH failure that names a
 * host-key problem after an allocation attempt.
 */
import { ConfigError, showValue, type ConfigIssue } from './errors';
import { dotted, lineOf, type ConfigSource, type PathSegment } from './parse';
import type { SweepConfig } from './schema';

export type ProbedFile =
  | { kind: 'file' | 'dir' | 'other'; /** permission bits (mode & 0o7777) */ mode: number; readable: boolean }
  | { kind: 'missing'; error: string };

/** What the checks need from a filesystem. */
export interface FileProbe {
  stat(path: string): ProbedFile;
}

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

interface Want {
  path: PathSegment[];
  value: string;
  what: string;
  /** Refuse group/world permissions like OpenSSH refuses an unprotected private key. */
  private: boolean;
}

/** Problems with the worker-side files of cluster `clusterName` (empty: all good). */
export function siteFileIssues(
  config: SweepConfig,
  clusterName: string,
  probe: FileProbe,
  source?: ConfigSource,
): ConfigIssue[] {
  const cluster = config.clusters[clusterName];
  if (cluster === undefined) return [];
  return loginFileIssues(cluster, ['clusters', clusterName], probe, source);
}

/**
 * The same checks for a login host and secrets file as a plan carries them (the worker checks the
 * plan it was given, on its own host); `base` is the path the issues are reported under.
 */
export function loginFileIssues(
  cluster: { loginHost: SweepConfig['clusters'][string]['loginHost']; secretsFile?: string | undefined },
  base: PathSegment[],
  probe: FileProbe,
  source?: ConfigSource,
): ConfigIssue[] {
  const wants: Want[] = [];
  const h = cluster.loginHost;
  if (!('local' in h)) {
    if (h.keyPath !== undefined)
      wants.push({ path: [...base, 'loginHost', 'keyPath'], value: h.keyPath, what: 'SSH private key', private: true });
    if (h.knownHostsPath !== undefined)
      wants.push({
        path: [...base, 'loginHost', 'knownHostsPath'],
        value: h.knownHostsPath,
        what: 'known_hosts file',
        private: false,
      });
    if (h.hostKey !== undefined && !/^(ssh-|ecdsa-|sk-)\S+\s+\S+/.test(h.hostKey.trim())) {
      wants.push({
        path: [...base, 'loginHost', 'hostKey'],
        value: h.hostKey,
        what: 'pinned host public key file',
        private: false,
      });
    }
  }
  if (cluster.secretsFile !== undefined)
    wants.push({ path: [...base, 'secretsFile'], value: cluster.secretsFile, what: 'secrets file', private: true });

  const issues: ConfigIssue[] = [];
  const add = (w: Want, message: string) =>
    issues.push({ path: dotted(w.path), value: showValue(w.value), message, line: lineOf(source, w.path) });
  for (const w of wants) {
    if (w.value.startsWith('~')) {
      add(w, `the ${w.what} path starts with ~ but HOME is not set here: set HOME or write the absolute path`);
      continue;
    }
    if (!w.value.startsWith('/')) {
      add(
        w,
        `the ${w.what} path must be absolute or start with ~/ (a relative path depends on the worker's working directory)`,
      );
      continue;
    }
    const st = probe.stat(w.value);
    if (st.kind === 'missing') {
      add(w, `the ${w.what} does not exist or cannot be read on this host (${st.error})`);
      continue;
    }
    if (st.kind !== 'file') {
      add(w, `the ${w.what} is a ${st.kind === 'dir' ? 'directory' : 'special file'}, not a file`);
      continue;
    }
    if (!st.readable) {
      add(w, `the ${w.what} is not readable by this user (mode ${octal(st.mode)})`);
      continue;
    }
    if (w.private && (st.mode & 0o077) !== 0) {
      add(
        w,
        `the ${w.what} is accessible by group or others (mode ${octal(st.mode)}); refused as OpenSSH refuses an unprotected private key: chmod 600 ${w.value}`,
      );
    }
  }
  return issues;
}

/** Throws ConfigError (exit 2 in the CLI) listing every problem with the cluster's worker-side files. */
export function checkSiteFiles(
  config: SweepConfig,
  clusterName: string,
  probe: FileProbe,
  source?: ConfigSource,
): void {
  const issues = siteFileIssues(config, clusterName, probe, source);
  if (issues.length > 0) throw new ConfigError(source?.file ?? '(config)', issues);
}
