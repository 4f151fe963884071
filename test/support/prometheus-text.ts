// A strict parser of the Prometheus text exposition format (version 0.0.4), for tests: it throws on
// anything a Prometheus server would reject or that the format forbids (a sample before its TYPE, a
// repeated series, a bad name or escape, a histogram whose buckets do not add up).

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string | null;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const series = new Set<string>();
  const typeSeen = new Set<string>();
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line.slice(0, 120))})`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!meta) return; // an ordinary comment
      const [, kind, name, rest] = meta;
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      const family = families.get(name) ?? { name, type: 'untyped' as MetricType, help: null, samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest as MetricType)) throw new Error(`${where}: unknown type '${rest}'`);
        if (families.has(name) && (families.get(name)!.samples.length > 0 || typeSeen.has(name)))
          throw new Error(`${where}: TYPE repeated or after samples`);
        typeSeen.add(name);
        family.type = rest as MetricType;
      } else {
        if (family.help !== null) throw new Error(`${where}: HELP repeated`);
        family.help = unescape(rest, where, false);
      }
      families.set(name, family);
      return;
    }
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, families, typeSeen);
    if (!family) throw new Error(`${where}: sample ${sample.name} has no TYPE line before it`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (series.has(key)) throw new Error(`${where}: series repeated`);
    series.add(key);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}
function familyOf(sampleName: string, families: Map<string, MetricFamily>, typeSeen: Set<string>): MetricFamily | undefined {
  const exact = families.get(sampleName);
  if (exact && typeSeen.has(sampleName)) return exact;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const family = families.get(sampleName.slice(0, -suffix.length));
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return family;
  }
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
  if (!head) throw new Error(`${where}: bad sample name`);
  const name = head[1];
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i))?.[0];
      if (!labelName || !LABEL_NAME.test(labelName)) throw new Error(`${where}: bad label name at ${i}`);
      i += labelName.length;
      if (line[i] !== '=' || line[i + 1] !== '"') throw new Error(`${where}: expected =" after label ${labelName}`);
      i += 2;
      let raw = '';
      while (line[i] !== '"') {
        if (i >= line.length) throw new Error(`${where}: unterminated label value`);
        if (line[i] === '\\') {
          raw += line.slice(i, i + 2);
          i += 2;
        } else raw += line[i++];
      }
      i++;
      if (labelName in labels) throw new Error(`${where}: label ${labelName} repeated`);
      labels[labelName] = unescape(raw, where, true);
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new Error(`${where}: expected , or } at ${i}`);
    }
    i++;
  }
  if (line[i] !== ' ') throw new Error(`${where}: expected a space before the value`);
  const parts = line.slice(i + 1).split(' ');
  if (parts.length > 2) throw new Error(`${where}: trailing text`);
  const value = parseValue(parts[0], where);
  if (parts.length === 2 && !/^-?\d+$/.test(parts[1])) throw new Error(`${where}: bad timestamp`);
  return { name, labels, value };
}

function parseValue(raw: string, where: string): number {
  // Prometheus reads values with Go's strconv.ParseFloat, which takes NaN and Inf in any case (prom-client
  // writes `Nan` for a mean with no samples yet).
  if (/^[+]?inf(inity)?$/i.test(raw)) return Infinity;
  if (/^-inf(inity)?$/i.test(raw)) return -Infinity;
  if (/^nan$/i.test(raw)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`${where}: bad value '${raw}'`);
  return Number(raw);
}

function unescape(raw: string, where: string, quoted: boolean): string {
  return raw.replace(/\\(.)/g, (_, c: string) => {
    if (c === 'n') return '\n';
    if (c === '\\') return '\\';
    if (c === '"' && quoted) return '"';
    throw new Error(`${where}: bad escape \\${c}`);
  });
}

// Buckets per series (labels other than le): cumulative, ending in +Inf equal to _count.
function checkHistogram(family: MetricFamily): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  const keyOf = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(),
    );
  for (const s of family.samples) {
    const group = groups.get(keyOf(s.labels)) ?? { buckets: [] };
    groups.set(keyOf(s.labels), group);
    if (s.name.endsWith('_bucket')) {
      if (s.labels.le === undefined) throw new Error(`${family.name}: bucket without le`);
      group.buckets.push([parseValue(s.labels.le, family.name), s.value]);
    } else if (s.name.endsWith('_count')) group.count = s.value;
  }
  for (const [key, group] of groups) {
    const sorted = [...group.buckets].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++)
      if (sorted[i][1] < sorted[i - 1][1]) throw new Error(`${family.name}${key}: buckets are not cumulative`);
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Infinity) throw new Error(`${family.name}${key}: no +Inf bucket`);
    if (group.count !== inf[1]) throw new Error(`${family.name}${key}: +Inf bucket ${inf[1]} differs from _count ${group.count}`);
  }
}

// The value of one series (0 when absent), e.g. value(m, 'toolgate_tool_calls_total', { tool: 'read_file' }).
export function sampleValue(
  families: Map<string, MetricFamily>,
  family: string,
  labels: Record<string, string>,
  sampleName = family,
): number {
  const samples = families.get(family)?.samples ?? [];
  const match = samples.find(
    (s) =>
      s.name === sampleName &&
      Object.keys(labels).every((k) => s.labels[k] === labels[k]) &&
      Object.keys(s.labels).filter((k) => k !== 'le').length === Object.keys(labels).length,
  );
  return match?.value ?? 0;
}
