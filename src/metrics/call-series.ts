import type { Metric } from 'prom-client';

// prom-client's own counters and histograms hash their label values into a string on every inc() and
// observe(), bound children included. The call path records into plain numbers held per label set
// instead, and these metrics turn them into prom-client's shape only when /metrics is scraped.

interface Value {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

interface Collected {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: Value[];
  aggregator: 'sum';
}

// A counter per label set: `series(...)` once, then `.n++` per event.
export class CounterSeries {
  n = 0;
}

// One histogram's buckets for one label set; observe() is a scan of at most a dozen bounds.
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

abstract class ScrapedMetric<S> {
  protected readonly series = new Map<string, { labels: Record<string, string>; series: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    protected readonly labelNames: readonly string[],
  ) {}

  // Once per label set (callers keep what it answers); the key is built here, never per event.
  protected bind(values: readonly string[], create: () => S): S {
    const key = values.join('\u0000');
    let entry = this.series.get(key);
    if (entry === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((label, i) => (labels[label] = values[i]));
      entry = { labels, series: create() };
      this.series.set(key, entry);
    }
    return entry.series;
  }

  // Registered as a prom-client metric: the registry calls get() when it renders.
  asMetric(): Metric {
    return this as unknown as Metric;
  }

  abstract get(): Promise<Collected>;
}

export class ScrapedCounter extends ScrapedMetric<CounterSeries> {
  readonly type = 'counter';

  labels(...values: string[]): CounterSeries {
    return this.bind(values, () => new CounterSeries());
  }

  get(): Promise<Collected> {
    const values = [...this.series.values()].map(({ labels, series }) => ({ labels, value: series.n }));
    return Promise.resolve({ name: this.name, help: this.help, type: 'counter', values, aggregator: 'sum' });
  }
}

export class ScrapedHistogram extends ScrapedMetric<HistogramSeries> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  labels(...values: string[]): HistogramSeries {
    return this.bind(values, () => new HistogramSeries(this.bounds));
  }

  get(): Promise<Collected> {
    const values: Value[] = [];
    for (const { labels, series } of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += series.counts[i];
        values.push({
          labels: { ...labels, le: i < this.bounds.length ? String(this.bounds[i]) : '+Inf' },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      }
      values.push({ labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: series.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' });
  }
}
