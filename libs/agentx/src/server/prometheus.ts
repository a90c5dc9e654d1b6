/**
 * Prometheus text exposition format (0.0.4, and the OpenMetrics subset vLLM/SGLang emit) → samples with
 * their labels (pure). Hand-written: the one npm candidate (parse-prometheus-text-format 1.1.1) has had no
 * release since 2018 and groups by family in a way that drops the raw sample names (`_total`, `_bucket`).
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}

export interface Exposition {
  samples: Sample[];
  /** `# TYPE` declarations: family name → counter|gauge|histogram|summary|untyped|… */
  types: Record<string, string>;
}

export class PrometheusParseError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'PrometheusParseError';
  }
}

const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;

function parseValue(s: string, line: number): number {
  switch (s) {
    case 'NaN':
      return NaN;
    case '+Inf':
    case 'Inf':
      return Infinity;
    case '-Inf':
      return -Infinity;
  }
  const v = Number(s);
  if (s === '' || Number.isNaN(v)) throw new PrometheusParseError(`bad value ${JSON.stringify(s)}`, line);
  return v;
}

export function parsePrometheus(text: string): Exposition {
  const samples: Sample[] = [];
  const types: Record<string, string> = {};
  const lines = text.split('\n');
  for (let ln = 0; ln < lines.length; ln++) {
    const line = lines[ln]!.replace(/\r$/, '');
    const lineNo = ln + 1;
    let i = 0;
    while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
    if (i >= line.length) continue;
    if (line[i] === '#') {
      const m = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(line.slice(i));
      if (m) types[m[1]!] = m[2]!;
      continue;
    }
    // metric name
    const start = i;
    if (!NAME_START.test(line[i]!))
      throw new PrometheusParseError(`bad metric name start ${JSON.stringify(line[i])}`, lineNo);
    while (i < line.length && NAME_CHAR.test(line[i]!)) i++;
    const name = line.slice(start, i);
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      for (;;) {
        while (line[i] === ' ' || line[i] === ',') i++;
        if (line[i] === '}') {
          i++;
          break;
        }
        if (i >= line.length) throw new PrometheusParseError('unterminated label set', lineNo);
        const ls = i;
        while (i < line.length && /[a-zA-Z0-9_]/.test(line[i]!)) i++;
        const lname = line.slice(ls, i);
        if (lname === '') throw new PrometheusParseError(`bad label name at column ${i + 1}`, lineNo);
        while (line[i] === ' ') i++;
        if (line[i] !== '=') throw new PrometheusParseError(`expected '=' after label ${lname}`, lineNo);
        i++;
        while (line[i] === ' ') i++;
        if (line[i] !== '"') throw new PrometheusParseError(`expected '"' for label ${lname}`, lineNo);
        i++;
        let v = '';
        for (;;) {
          if (i >= line.length) throw new PrometheusParseError(`unterminated value of label ${lname}`, lineNo);
          const c = line[i]!;
          if (c === '\\') {
            const n = line[i + 1];
            v += n === 'n' ? '\n' : n === '\\' ? '\\' : n === '"' ? '"' : `\\${n ?? ''}`;
            i += 2;
          } else if (c === '"') {
            i++;
            break;
          } else {
            v += c;
            i++;
          }
        }
        labels[lname] = v;
      }
    }
    const rest = line.slice(i).trim().split(/\s+/);
    if (rest.length < 1 || rest[0] === '') throw new PrometheusParseError(`missing value for ${name}`, lineNo);
    const value = parseValue(rest[0]!, lineNo);
    const sample: Sample = { name, labels, value };
    if (rest[1] !== undefined && rest[1] !== '#') {
      const ts = Number(rest[1]);
      if (Number.isNaN(ts)) throw new PrometheusParseError(`bad timestamp ${rest[1]}`, lineNo);
      sample.timestampMs = ts;
    }
    samples.push(sample);
  }
  return { samples, types };
}

/** Sum of every sample named `name` (all label sets), or null when the metric is absent. */
export function sumMetric(
  samples: readonly Sample[],
  name: string,
  filter?: (labels: Record<string, string>) => boolean,
): number | null {
  let found = false;
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (filter && !filter(s.labels)) continue;
    found = true;
    sum += s.value;
  }
  return found ? sum : null;
}

/** Max over every sample named `name`, or null when absent. */
export function maxMetric(samples: readonly Sample[], name: string): number | null {
  let max: number | null = null;
  for (const s of samples) if (s.name === name && (max === null || s.value > max)) max = s.value;
  return max;
}
