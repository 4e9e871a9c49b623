// A strict reader of the Prometheus text exposition format (version 0.0.4), so tests check /metrics the way a
// Prometheus server would read it: every line a comment, a HELP/TYPE line or a well-formed sample; each metric
// family typed once, before its samples; histograms with cumulative buckets ending in +Inf that agree with _count.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, MetricType>;
  help: Map<string, string>;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<string, string[]> = {
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['_sum', '_count', ''],
  counter: ['', '_total'],
};

// As Prometheus reads values (Go's ParseFloat): NaN and Inf in any case.
function parseValue(text: string, line: number): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text))
    throw new Error(`line ${line}: value '${text}' is not a number`);
  return Number(text);
}

/** Reads `{a="x",b="y"}` starting at `at`; returns the labels and the index after the closing brace. */
function parseLabels(text: string, at: number, line: number): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  let i = at + 1;
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without '='`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`line ${line}: bad label name '${name}'`);
    if (name in labels) throw new Error(`line ${line}: label '${name}' given twice`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value of '${name}' is not quoted`);
    let j = eq + 2;
    let value = '';
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`line ${line}: bad escape in label '${name}'`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`line ${line}: expected ',' or '}' after label '${name}'`);
  }
  return [labels, i + 1];
}

function familyOf(name: string, types: Map<string, MetricType>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ['_bucket', '_sum', '_count', '_total']) {
    if (name.endsWith(suffix) && types.has(name.slice(0, -suffix.length))) return name.slice(0, -suffix.length);
  }
  return undefined;
}

function checkHistograms(exposition: Exposition): void {
  for (const [family, type] of exposition.types) {
    if (type !== 'histogram') continue;
    const series = new Map<string, Sample[]>();
    for (const s of exposition.samples.filter((x) => x.name === `${family}_bucket`)) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`${family}_bucket without an 'le' label`);
      const key = JSON.stringify(Object.entries(rest).sort());
      series.set(key, [...(series.get(key) ?? []), s]);
    }
    for (const [key, buckets] of series) {
      const values = buckets.map((b) => b.value);
      if (buckets.at(-1)!.labels.le !== '+Inf') throw new Error(`${family} ${key}: the last bucket is not +Inf`);
      if (values.some((v, i) => i > 0 && v < values[i - 1]!))
        throw new Error(`${family} ${key}: buckets are not cumulative`);
      const count = exposition.samples.find(
        (x) => x.name === `${family}_count` && JSON.stringify(Object.entries(x.labels).sort()) === key,
      );
      if (!count || count.value !== values.at(-1))
        throw new Error(`${family} ${key}: _count does not equal the +Inf bucket`);
    }
  }
}

/** Parses an exposition, throwing with the line number at the first thing Prometheus would refuse. */
export function parseExposition(text: string): Exposition {
  const exposition: Exposition = { types: new Map(), help: new Map(), samples: [] };
  const seen = new Set<string>();
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  text
    .split('\n')
    .slice(0, -1)
    .forEach((raw, index) => {
      const line = index + 1;
      if (raw.trim() === '') return;
      if (raw.startsWith('#')) {
        const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
        if (!m) return; // a plain comment
        const [, kind, name, rest] = m as unknown as [string, string, string, string];
        if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name '${name}'`);
        if (kind === 'TYPE') {
          if (!TYPES.has(rest)) throw new Error(`line ${line}: unknown type '${rest}'`);
          if (exposition.types.has(name)) throw new Error(`line ${line}: ${name} typed twice`);
          if (seen.has(name)) throw new Error(`line ${line}: TYPE of ${name} after its samples`);
          exposition.types.set(name, rest as MetricType);
        } else exposition.help.set(name, rest);
        return;
      }
      const nameEnd = raw.search(/[{ ]/);
      if (nameEnd <= 0) throw new Error(`line ${line}: not a sample: '${raw}'`);
      const name = raw.slice(0, nameEnd);
      if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name '${name}'`);
      let labels: Record<string, string> = {};
      let rest = nameEnd;
      if (raw[nameEnd] === '{') [labels, rest] = parseLabels(raw, nameEnd, line);
      const parts = raw.slice(rest).trim().split(/ +/);
      if (raw[rest] !== ' ' || parts.length < 1 || parts.length > 2)
        throw new Error(`line ${line}: expected ' value [timestamp]'`);
      const value = parseValue(parts[0]!, line);
      if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`line ${line}: bad timestamp`);
      const family = familyOf(name, exposition.types);
      if (family) {
        const type = exposition.types.get(family)!;
        const suffix = name.slice(family.length);
        if (SUFFIXES[type] && !SUFFIXES[type]!.includes(suffix))
          throw new Error(`line ${line}: ${name} is not a sample of a ${type}`);
        seen.add(family);
      }
      exposition.samples.push({ name, labels, value });
    });
  checkHistograms(exposition);
  return exposition;
}

/** The value of one sample: the sum over every series of `name` whose labels include `labels` (0 when none). */
export function sampleValue(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return exposition.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
