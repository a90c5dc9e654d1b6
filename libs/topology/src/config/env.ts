/**
 * `${VAR}` placeholder expansion for config values. Pure: the caller passes the environment.
 * `$${` escapes a literal `${`. An unset or empty variable is an error naming it, unless the
 * placeholder gives a default as in the shell: `${VAR:-default}`.
 */
export type EnvMap = Readonly<Record<string, string | undefined>>;

/** Variable names that look like credentials (they belong in a secretEnv, never in the config's values). */
export const SECRET_LIKE = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|CREDENTIAL|PRIVATE_?KEY)/i;

const PLACEHOLDER = /\$\$\{|\$\{([^}]*)\}/g;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ExpandProblem {
  variable: string;
  message: string;
}

/**
 * Expand one string; returns the result or the problems (unset/empty/malformed variables, and any
 * variable `refuse` names a reason for: that placeholder is left as written, never expanded).
 */
export function expandEnvString(
  text: string,
  env: EnvMap,
  refuse: (name: string) => string | undefined = () => undefined,
): { value: string; problems: ExpandProblem[] } {
  const problems: ExpandProblem[] = [];
  const value = text.replace(PLACEHOLDER, (match, name: string | undefined) => {
    if (match === '$${') return '${';
    const [varName = '', fallback] = splitDefault(name ?? '');
    if (!VAR_NAME.test(varName)) {
      problems.push({
        variable: varName,
        message: `malformed placeholder \${${varName}} (use \${NAME} with letters, digits, _)`,
      });
      return match;
    }
    const refused = refuse(varName);
    if (refused !== undefined) {
      problems.push({ variable: varName, message: refused });
      return match;
    }
    const v = env[varName];
    if ((v === undefined || v === '') && fallback !== undefined) return fallback;
    if (v === undefined || v === '') {
      problems.push({
        variable: varName,
        message: `environment variable ${varName} is ${v === undefined ? 'not set' : 'empty'} (set it, e.g. source .infersweep/stack/env.sh, or edit the config)`,
      });
      return match;
    }
    return v;
  });
  return { value, problems };
}

/** `NAME:-default` → [NAME, default]; `NAME` → [NAME, undefined]. */
function splitDefault(inner: string): [string, string | undefined] {
  const i = inner.indexOf(':-');
  return i < 0 ? [inner, undefined] : [inner.slice(0, i), inner.slice(i + 2)];
}
