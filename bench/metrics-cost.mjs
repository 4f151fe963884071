// Cost per tool call of the call metrics (node bench/metrics-cost.mjs after npm run build): the service's
// Metrics (plain numbers bound once per label set) against prom-client's own bound children doing the same
// counter increment and histogram observation.
import { Counter, Histogram, Registry } from 'prom-client';
import { Metrics } from '../dist/metrics/metrics.js';

const metrics = new Metrics({ defaultMetrics: false });
const registry = new Registry();
const counter = new Counter({ name: 'c', help: 'c', labelNames: ['tool', 'status', 'channel'], registers: [registry] }).labels(
  'read_file',
  'ok',
  'rest',
);
const histogram = new Histogram({
  name: 'h',
  help: 'h',
  labelNames: ['tool', 'channel'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
}).labels('read_file', 'rest');
const N = 2_000_000;

function measure(label, fn) {
  for (let i = 0; i < 100_000; i++) fn(i);
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn(i);
  console.log(`${label}: ${(Number(process.hrtime.bigint() - started) / N).toFixed(1)} ns per call`);
}

for (let round = 0; round < 2; round++) {
  measure('Metrics.callFinished (service)   ', (i) => metrics.callFinished(metrics.toolLabel('read_file', true), 'ok', 'rest', i % 7));
  measure('prom-client bound inc + observe  ', (i) => {
    counter.inc();
    histogram.observe((i % 7) / 1000);
  });
}
