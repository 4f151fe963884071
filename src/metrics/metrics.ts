import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { BUILTIN_TOOL_NAMES } from '../execution/builtin-tool-names.js';
import { type CounterSeries, type HistogramSeries, ScrapedCounter, ScrapedHistogram } from './call-series.js';

// Label values stay bounded: a built-in tool keeps its name (ten of them); every tenant skill tool is
// `skill` (tenants name them, so their names are unbounded), and a name that matched no tool is `unknown`.
// No project id, tenant id or path is ever a label.
export const SKILL_TOOL_LABEL = 'skill';
export const UNKNOWN_TOOL_LABEL = 'unknown';

export type CallChannel = 'rest' | 'mcp' | 'browse';
export type RateLimitBucket = 'requests' | 'commands' | 'sign-in' | 'failed-authentication';

// The counters a cache keeps (TtlLruCache): read when /metrics is scraped, never pushed per lookup.
export interface CacheCounters {
  readonly hits: number;
  readonly misses: number;
  readonly size: number;
}

// One tool label's series on one channel: its counters by status and its duration histogram.
interface ChannelSeries {
  byStatus: Map<string, CounterSeries>;
  duration: HistogramSeries;
}
type ToolSeries = Partial<Record<CallChannel, ChannelSeries>>;

// Node's own figures describe the process, not an app: collected once per process into a registry of their
// own (each collector keeps a GC observer and an event-loop histogram for good), appended to each scrape.
let nodeDefaults: Registry | null = null;
function nodeDefaultsRegistry(): Registry {
  if (nodeDefaults === null) {
    nodeDefaults = new Registry();
    // CPU, memory, heap spaces, GC, handles, and the event loop's lag (nodejs_eventloop_lag_*).
    collectDefaultMetrics({ register: nodeDefaults, eventLoopMonitoringPrecision: 20 });
  }
  return nodeDefaults;
}

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

// The service's Prometheus registry (one per app, so two apps in one process never share counts). The
// call path records into plain numbers bound once per label set (call-series.ts): after the first call of
// a tool, status and channel, recording one costs two map lookups, two increments and a bucket scan.
export class Metrics {
  readonly registry = new Registry();
  private readonly builtins = new Set(BUILTIN_TOOL_NAMES);
  private readonly calls: ScrapedCounter;
  private readonly durations: ScrapedHistogram;
  private readonly byTool = new Map<string, ToolSeries>();
  private readonly validationRefusals: ScrapedCounter;
  private readonly validationByTool = new Map<string, CounterSeries>();
  private readonly rateLimits: Record<RateLimitBucket, Counter.Internal>;
  private readonly sandboxFailures: Counter<never>;
  private readonly rateLimitStoreFailures: Counter<never>;
  private readonly auditBatchSizes: Histogram<never>;
  private readonly auditWriteFailures: Counter<never>;
  private readonly caches = new Map<string, CacheCounters>();
  private readonly defaults: Registry | null;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.calls = new ScrapedCounter(
      'toolgate_tool_calls_total',
      'Tool calls that ended, by tool (built-in name, skill or unknown), audit status and channel',
      ['tool', 'status', 'channel'],
    );
    this.durations = new ScrapedHistogram(
      'toolgate_tool_call_duration_seconds',
      'Time from a call being admitted to its outcome, refusals included',
      ['tool', 'channel'],
      DURATION_BUCKETS,
    );
    this.validationRefusals = new ScrapedCounter(
      'toolgate_validation_refusals_total',
      'Calls refused because their arguments did not fit the tool schema (422 invalid_arguments)',
      ['tool'],
    );
    for (const metric of [this.calls, this.durations, this.validationRefusals]) this.registry.registerMetric(metric.asMetric());
    const rateLimited = new Counter({
      name: 'toolgate_rate_limit_refusals_total',
      help: 'Requests and command calls refused with 429, by rate-limit bucket',
      labelNames: ['bucket'],
      registers,
    });
    this.rateLimits = {
      requests: rateLimited.labels('requests'),
      commands: rateLimited.labels('commands'),
      'sign-in': rateLimited.labels('sign-in'),
      'failed-authentication': rateLimited.labels('failed-authentication'),
    };
    this.sandboxFailures = new Counter({
      name: 'toolgate_sandbox_setup_failures_total',
      help: 'Commands whose sandbox could not be set up (sandbox_failed): the command did not run',
      registers,
    });
    this.rateLimitStoreFailures = new Counter({
      name: 'toolgate_rate_limit_store_failures_total',
      help: 'Requests the rate-limit store (Redis) did not count in time: refused with 503, or let through under RATE_LIMIT_ON_STORE_ERROR=allow',
      registers,
    });
    this.auditBatchSizes = new Histogram({
      name: 'toolgate_audit_batch_rows',
      help: 'Rows per multi-row audit insert that the database took',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000],
      registers,
    });
    this.auditWriteFailures = new Counter({
      name: 'toolgate_audit_write_failures_total',
      help: 'Audit inserts that failed (the rows stay queued and are retried; see the log for rows dropped)',
      registers,
    });
    const caches = this.caches;
    // Counters the caches keep themselves, copied when scraped.
    const copied = (read: (c: CacheCounters) => number) =>
      function (this: Counter<'cache'>) {
        this.reset();
        for (const [name, counters] of caches) this.inc({ cache: name }, read(counters));
      };
    new Counter({
      name: 'toolgate_cache_hits_total',
      help: 'Lookups answered by an in-process cache, by cache',
      labelNames: ['cache'],
      registers,
      collect: copied((c) => c.hits),
    });
    new Counter({
      name: 'toolgate_cache_misses_total',
      help: 'Lookups an in-process cache could not answer (absent or expired), by cache',
      labelNames: ['cache'],
      registers,
      collect: copied((c) => c.misses),
    });
    new Gauge({
      name: 'toolgate_cache_hit_ratio',
      help: 'hits / (hits + misses) since start, by cache',
      labelNames: ['cache'],
      registers,
      collect: this.cacheCollector((c) => (c.hits + c.misses === 0 ? 0 : c.hits / (c.hits + c.misses))),
    });
    new Gauge({
      name: 'toolgate_cache_entries',
      help: 'Entries an in-process cache holds now, by cache',
      labelNames: ['cache'],
      registers,
      collect: this.cacheCollector((c) => c.size),
    });
    this.defaults = options.defaultMetrics === false ? null : nodeDefaultsRegistry();
  }

  // The label a tool name is counted under (see the constants above).
  toolLabel(tool: string, known: boolean): string {
    if (!known) return UNKNOWN_TOOL_LABEL;
    return this.builtins.has(tool) ? tool : SKILL_TOOL_LABEL;
  }

  // One call ended (its audit row was queued): counted by tool, status and channel, and timed.
  callFinished(toolLabel: string, status: string, channel: CallChannel, durationMs: number): void {
    let tool = this.byTool.get(toolLabel);
    if (tool === undefined) {
      tool = {};
      this.byTool.set(toolLabel, tool);
    }
    let series = tool[channel];
    if (series === undefined) {
      series = { byStatus: new Map(), duration: this.durations.labels(toolLabel, channel) };
      tool[channel] = series;
    }
    let counter = series.byStatus.get(status);
    if (counter === undefined) {
      counter = this.calls.labels(toolLabel, status, channel);
      series.byStatus.set(status, counter);
    }
    counter.n++;
    series.duration.observe(durationMs / 1000);
  }

  validationRefused(toolLabel: string): void {
    let counter = this.validationByTool.get(toolLabel);
    if (counter === undefined) {
      counter = this.validationRefusals.labels(toolLabel);
      this.validationByTool.set(toolLabel, counter);
    }
    counter.n++;
  }

  rateLimited(bucket: RateLimitBucket): void {
    this.rateLimits[bucket].inc();
  }

  rateLimitStoreFailed(): void {
    this.rateLimitStoreFailures.inc();
  }

  sandboxSetupFailed(): void {
    this.sandboxFailures.inc();
  }

  auditBatchWritten(rows: number): void {
    this.auditBatchSizes.observe(rows);
  }

  auditWriteFailed(): void {
    this.auditWriteFailures.inc();
  }

  // A gauge read from its owner when scraped (queue depths, thread utilisation): nothing runs per call.
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  // Gauges by label values that their owner reads when scraped (one read serves every gauge of the
  // scrape); the owner bounds how many label values it answers.
  labelledGauges<L extends string>(
    gauges: Array<{ name: string; help: string; labelNames: readonly L[] }>,
    read: () => Promise<Array<Array<{ labels: Record<L, string>; value: number }>>>,
  ): void {
    let pending: Promise<Array<Array<{ labels: Record<L, string>; value: number }>>> | undefined;
    // The first gauge of a scrape reads; the others take the same answer.
    const readOnce = () => {
      pending ??= read().finally(() => setTimeout(() => (pending = undefined), 0).unref());
      return pending;
    };
    gauges.forEach(({ name, help, labelNames }, i) => {
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        async collect() {
          const samples = (await readOnce())[i] ?? [];
          this.reset();
          for (const { labels, value } of samples) this.set(labels as Partial<Record<L, string | number>>, value);
        },
      });
    });
  }

  // A counter its owner keeps (reconnections, messages dropped), copied when scraped.
  counter(name: string, help: string, read: () => number): void {
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  // Counters its owner keeps by one label of a few fixed values (refusals by reason), copied when scraped.
  labelledCounter<V extends string>(name: string, help: string, labelName: string, read: () => Readonly<Record<V, number>>): void {
    new Counter({
      name,
      help,
      labelNames: [labelName],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [value, count] of Object.entries<number>(read())) this.inc({ [labelName]: value }, count);
      },
    });
  }

  // A cache by a fixed name (e.g. api_keys): its own hit and miss counters are read when scraped.
  cache(name: string, counters: CacheCounters): void {
    this.caches.set(name, counters);
  }

  async render(): Promise<string> {
    const [own, node] = await Promise.all([this.registry.metrics(), this.defaults?.metrics() ?? '']);
    // prom-client's text always ends with a newline, so the two concatenate as they are.
    return own + node;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private cacheCollector(read: (c: CacheCounters) => number) {
    const caches = this.caches;
    return function (this: Gauge<'cache'>) {
      for (const [name, counters] of caches) this.labels(name).set(read(counters));
    };
  }
}
