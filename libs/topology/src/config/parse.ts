import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import { ConfigError, showValue, type ConfigIssue } from './errors';
import { expandEnvString, SECRET_LIKE, type EnvMap } from './env';
import { sweepConfigSchema, type SweepConfig, type TopologySpec } from './schema';
import { checkTopology } from '../topology/validate';
import { aliasIssue, yamlSyntaxIssues } from './yaml-errors';

/** Where a config came from, for error messages: file name and YAML path → line. */
export interface ConfigSource {
  file: string;
  /** Dotted path (`orientations.balanced.topology.ep`) → 1-based line. */
  lines: Record<string, number>;
}

export interface LoadedConfig {
  config: SweepConfig;
  source: ConfigSource;
}

export interface ParseOptions {
  /** File name for messages (e.g. `configs/kimik3-fp4-h200.yaml`). */
  file: string;
  /** Environment for `${VAR}` placeholders. */
  env: EnvMap;
  /**
   * Expand placeholders only in these cluster profiles (others keep their text, so a config
   * whose `local` profile needs INFERSWEEP_STACK can still be planned for `h200`). Default: all.
   */
  clusters?: readonly string[];
}

export type PathSegment = string | number;
export const dotted = (path: readonly PathSegment[]): string =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');

export function lineOf(source: ConfigSource | undefined, path: readonly PathSegment[]): number | undefined {
  if (source === undefined) return undefined;
  for (let n = path.length; n >= 0; n--) {
    const l = source.lines[dotted(path.slice(0, n))];
    if (l !== undefined) return l;
  }
  return undefined;
}

function collectLines(node: unknown, path: PathSegment[], lc: LineCounter, out: Record<string, number>): void {
  const lineAt = (n: unknown) => {
    const r = (n as YamlNode | null)?.range;
    return r ? lc.linePos(r[0]).line : undefined;
  };
  if (isMap(node)) {
    for (const item of node.items) {
      if (!isPair(item)) continue;
      const key = isScalar(item.key) ? String(item.key.value) : String(item.key);
      const p = [...path, key];
      const l = lineAt(item.key);
      if (l !== undefined) out[dotted(p)] = l;
      collectLines(item.value, p, lc, out);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      const p = [...path, i];
      const l = lineAt(item);
      if (l !== undefined) out[dotted(p)] = l;
      collectLines(item, p, lc, out);
    });
  }
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/** Keys an object schema at `path` accepts (for "unknown key" messages). */
function allowedKeysAt(schema: z.ZodType, path: readonly PathSegment[]): string[] | undefined {
  type Def = {
    type: string;
    shape?: Record<string, z.ZodType>;
    innerType?: z.ZodType;
    valueType?: z.ZodType;
    element?: z.ZodType;
    in?: z.ZodType;
    options?: z.ZodType[];
  };
  const def = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;
  const unwrap = (s: z.ZodType): z.ZodType => {
    let cur = s;
    for (;;) {
      const d = def(cur);
      if (
        (d.type === 'optional' || d.type === 'default' || d.type === 'nullable' || d.type === 'prefault') &&
        d.innerType
      )
        cur = d.innerType;
      else if (d.type === 'pipe' && d.in) cur = d.in;
      else return cur;
    }
  };
  let cur = unwrap(schema);
  for (const seg of path) {
    const d = def(cur);
    if (d.type === 'object' && d.shape && typeof seg === 'string' && d.shape[seg]) cur = unwrap(d.shape[seg]);
    else if (d.type === 'record' && d.valueType) cur = unwrap(d.valueType);
    else if (d.type === 'array' && d.element) cur = unwrap(d.element);
    else return undefined;
  }
  const d = def(cur);
  if (d.type === 'object' && d.shape) return Object.keys(d.shape);
  if (d.type === 'union' && d.options) {
    const keys = d.options.flatMap((o) => {
      const od = def(unwrap(o));
      return od.type === 'object' && od.shape ? Object.keys(od.shape) : [];
    });
    return [...new Set(keys)];
  }
  return undefined;
}

/** Turn zod issues into config issues with paths, values, lines and what is allowed. */
export function zodIssuesToConfigIssues(
  issues: readonly z.core.$ZodIssue[],
  root: unknown,
  source: ConfigSource | undefined,
  schema: z.ZodType,
  prefix: readonly PathSegment[] = [],
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...(issue.path as PathSegment[])];
    if (issue.code === 'unrecognized_keys') {
      const allowed = allowedKeysAt(schema, issue.path as PathSegment[]);
      for (const key of issue.keys) {
        const p = [...path, key];
        out.push({
          path: dotted(p),
          value: showValue(valueAt(root, p)),
          message: `unknown key "${key}"${allowed ? ` (allowed here: ${allowed.join(', ')})` : ''}`,
          line: lineOf(source, p),
        });
      }
      continue;
    }
    const value = valueAt(root, path);
    let message = issue.message;
    if (issue.code === 'invalid_type' && value === undefined) message = `required (${issue.expected})`;
    else if (issue.code === 'invalid_value' && 'values' in issue)
      message = `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    else if (issue.code === 'invalid_union' && typeof value === 'object' && value !== null) {
      const firstBranch = (issue.errors[0] ?? []).map((e) => `${dotted(e.path as PathSegment[]) || '.'}: ${e.message}`);
      message = `does not match any allowed form (${firstBranch.join('; ') || issue.message})`;
    }
    out.push({ path: dotted(path), value: showValue(value), message, line: lineOf(source, path) });
  }
  return out;
}

/** The secret variable names a raw config declares (engine.secretEnv and every cluster's secretEnv). */
function declaredSecrets(raw: unknown): Set<string> {
  const names = new Set<string>();
  const add = (v: unknown) => {
    if (Array.isArray(v)) for (const n of v) if (typeof n === 'string') names.add(n);
  };
  const r = raw as {
    engine?: { secretEnv?: unknown };
    clusters?: Record<string, { secretEnv?: unknown } | null>;
  } | null;
  add(r?.engine?.secretEnv);
  for (const c of Object.values(r?.clusters ?? {})) add(c?.secretEnv);
  return names;
}

/**
 * A `${VAR}` placeholder is expanded into the config, and so into the plan, the workflow history,
 * plan.json and srun's argv: one naming a secret (declared in a secretEnv, or a credential-like
 * name) is refused wherever it appears, never expanded.
 */
function secretPlaceholder(secrets: ReadonlySet<string>): (name: string) => string | undefined {
  return (name) =>
    secrets.has(name) || SECRET_LIKE.test(name)
      ? `\${${name}} names a secret: a placeholder's value would be stored in the plan, the workflow history and srun's argv. Declare ${name} in engine.secretEnv and let the worker hand it to the server's environment (an argument that needs it: read it from that variable in the server's command)`
      : undefined;
}

function expandAll(
  value: unknown,
  path: PathSegment[],
  env: EnvMap,
  skip: (path: PathSegment[]) => boolean,
  issues: ConfigIssue[],
  source: ConfigSource,
  refuse: (name: string) => string | undefined,
): unknown {
  // A cluster the caller did not select is expanded leniently: placeholders it cannot resolve
  // stay as written (it is validated, never used), so its unset variables are not errors.
  if (skip(path)) return expandAll(value, path, env, () => false, [], source, refuse);
  if (typeof value === 'string') {
    const { value: v, problems } = expandEnvString(value, env, refuse);
    for (const p of problems)
      issues.push({ path: dotted(path), value: showValue(value), message: p.message, line: lineOf(source, path) });
    return v;
  }
  if (Array.isArray(value)) return value.map((v, i) => expandAll(v, [...path, i], env, skip, issues, source, refuse));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, expandAll(v, [...path, k], env, skip, issues, source, refuse)]),
    );
  }
  return value;
}

/** Worker-side file paths of a cluster profile (read on the worker's host, where `~` means its HOME). */
export const LOCAL_PATH_FIELDS: readonly (readonly string[])[] = [
  ['loginHost', 'keyPath'],
  ['loginHost', 'knownHostsPath'],
  ['loginHost', 'hostKey'],
  ['secretsFile'],
];

/** `~/x` → `$HOME/x`, explicitly (nothing else expands it: ssh2 and fs take paths literally). */
function expandHome(value: string, env: EnvMap): { value: string; problem?: string } {
  if (!value.startsWith('~')) return { value };
  const m = /^~([^/]*)(\/.*)?$/.exec(value);
  if (m?.[1]) return { value, problem: `~${m[1]}/… (another user's home) is not expanded; write the absolute path` };
  const home = env.HOME;
  // no HOME given (a pure caller): left as written; checkSiteFiles refuses it on the worker's host
  if (home === undefined || home === '') return { value };
  if (!home.startsWith('/'))
    return {
      value,
      problem: `starts with ~ but HOME=${JSON.stringify(home)} is not absolute; fix HOME or write the absolute path`,
    };
  return { value: `${home.replace(/\/+$/, '')}${m?.[2] ?? ''}` };
}

function expandHomes(
  raw: unknown,
  selected: readonly string[] | undefined,
  env: EnvMap,
  issues: ConfigIssue[],
  source: ConfigSource,
): void {
  const clusters = (raw as { clusters?: unknown }).clusters;
  if (clusters === null || typeof clusters !== 'object') return;
  for (const [name, profile] of Object.entries(clusters as Record<string, unknown>)) {
    if (selected !== undefined && !selected.includes(name)) continue;
    for (const field of LOCAL_PATH_FIELDS) {
      const parent = field
        .slice(0, -1)
        .reduce<unknown>(
          (o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
          profile,
        );
      const key = field[field.length - 1]!;
      if (parent === null || typeof parent !== 'object') continue;
      const v = (parent as Record<string, unknown>)[key];
      if (typeof v !== 'string' || /^(ssh-|ecdsa-|sk-)/.test(v)) continue;
      const r = expandHome(v, env);
      const p = ['clusters', name, ...field];
      if (r.problem) issues.push({ path: dotted(p), value: showValue(v), message: r.problem, line: lineOf(source, p) });
      else (parent as Record<string, unknown>)[key] = r.value;
    }
  }
}

/**
 * A config file's YAML text as a plain mapping with the line of every path. Throws ConfigError on
 * syntax errors, runaway aliases, or a document that is not a mapping (`notMapping` says what it is).
 */
export function readYamlMapping(
  text: string,
  file: string,
  notMapping: string,
): { raw: Record<string, unknown>; source: ConfigSource } {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: true, prettyErrors: false });
  const source: ConfigSource = { file, lines: {} };
  if (doc.errors.length > 0) throw new ConfigError(file, yamlSyntaxIssues(doc, lc));
  const alias = aliasIssue(doc, lc);
  if (alias) throw new ConfigError(file, [alias]);
  collectLines(doc.contents, [], lc, source.lines);
  // expansion is bounded by aliasIssue above, so the library's own count-based limit is not needed
  const raw: unknown = doc.toJS({ maxAliasCount: -1 });
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError(file, [{ path: '', value: showValue(raw), message: notMapping }]);
  return { raw: raw as Record<string, unknown>, source };
}

/**
 * Parse and validate a sweep config from YAML text. Pure: the caller reads the file and passes
 * the environment. Throws ConfigError listing every problem (file, YAML path, value, fix, line).
 */
export function parseSweepConfig(text: string, opts: ParseOptions): LoadedConfig {
  const { raw, source } = readYamlMapping(
    text,
    opts.file,
    'a sweep config is a YAML mapping (name, model, image, engine, clusters, orientations, …)',
  );
  const issues: ConfigIssue[] = [];
  const selected = opts.clusters;
  const skip = (p: PathSegment[]) =>
    selected !== undefined && p.length === 2 && p[0] === 'clusters' && !selected.includes(String(p[1]));
  const expanded = expandAll(raw, [], opts.env, skip, issues, source, secretPlaceholder(declaredSecrets(raw)));
  if (issues.length > 0) throw new ConfigError(opts.file, issues);
  expandHomes(expanded, selected, opts.env, issues, source);
  if (issues.length > 0) throw new ConfigError(opts.file, issues);

  const parsed = sweepConfigSchema.safeParse(expanded);
  if (!parsed.success)
    throw new ConfigError(opts.file, zodIssuesToConfigIssues(parsed.error.issues, expanded, source, sweepConfigSchema));
  const config = parsed.data;

  // Cluster-independent topology rules (EP derivation, MoE, LB/endpoints) fail at parse time.
  // A disaggregated orientation's roles each have a topology of their own (rule 23).
  for (const [name, o] of Object.entries(config.orientations)) {
    const specs: [PathSegment[], TopologySpec][] = o.disaggregated
      ? [
          [['orientations', name, 'disaggregated', 'prefill', 'topology'], o.disaggregated.prefill.topology],
          [['orientations', name, 'disaggregated', 'decode', 'topology'], o.disaggregated.decode.topology],
        ]
      : o.topology
        ? [[['orientations', name, 'topology'], o.topology]]
        : [];
    for (const [at, t] of specs) {
      const r = checkTopology({ ...t, nodes: 1, gpusPerNode: t.tp * t.pp * t.dp, moe: config.model.moe });
      if (r.ok) continue;
      for (const v of r.violations) {
        if (v.rule !== 4 && v.rule !== 5 && !(v.rule === 13 && v.field !== 'lbMode')) continue;
        const p = [...at, v.field];
        issues.push({ path: dotted(p), value: showValue(v.value), message: v.message, line: lineOf(source, p) });
      }
    }
  }
  if (issues.length > 0) throw new ConfigError(opts.file, issues);
  return { config, source };
}
