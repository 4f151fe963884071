import autocannon from 'autocannon';
import { LatencyRecorder } from './stats.mjs';

// One autocannon run. Latencies come from its per-response event (float ms, every status), so p50/p99
// are exact and refusals (422) count like any answer. An answer is an error unless it has `expectStatus`
// and, when given, passes `checkBody` (e.g. a tool call answered 200 but with status "timeout").
// `sequence` (optional) replaces `body`: requests each connection sends in turn, each `{ body(context),
// after?(context) }`, sharing one context per connection for one pass through the sequence.
export async function httpLoad({
  url,
  method = 'GET',
  headers = {},
  body,
  sequence,
  connections,
  durationS,
  expectStatus,
  checkBody,
  timeoutS = 60,
}) {
  const latencies = new LatencyRecorder();
  let unexpected = 0;
  let bytes = 0;
  const target = new URL(url);
  const request = (step) => ({
    method,
    path: target.pathname + target.search,
    headers: body === undefined && !step ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    ...(step ? { setupRequest: (req, context) => ({ ...req, body: JSON.stringify(step.body(context)) }) } : {}),
    onResponse(status, responseBody, context) {
      if (status !== expectStatus || (checkBody && !checkBody(responseBody))) unexpected++;
      step?.after?.(context);
    },
  });
  const requests = sequence ? sequence.map(request) : [request(null)];
  const instance = autocannon({ url: target.origin, requests, connections, duration: durationS, timeout: timeoutS });
  instance.on('response', (_client, _statusCode, resBytes, responseTime) => {
    latencies.record(responseTime);
    bytes += resBytes;
  });
  const result = await instance;
  const count = latencies.count;
  return {
    requests: count,
    rps: count / result.duration,
    ...latencies.summary(),
    bytesPerResponse: count ? Math.round(bytes / count) : 0,
    errors: unexpected + result.errors + result.timeouts,
  };
}

// The two loops below share one tally: each call's latency from `from` (when it was sent, or when it was
// due), and whether its answer was the expected one.
function callTally(isExpected) {
  const latencies = new LatencyRecorder();
  let unexpected = 0;
  const started = performance.now();
  return {
    async time(call, from) {
      let ok;
      try {
        ok = isExpected(await call(), null);
      } catch (error) {
        ok = isExpected(null, error);
      }
      latencies.record(performance.now() - from);
      if (!ok) unexpected++;
    },
    result() {
      const elapsedS = (performance.now() - started) / 1000;
      return {
        requests: latencies.count,
        rps: latencies.count / elapsedS,
        ...latencies.summary(),
        bytesPerResponse: null,
        errors: unexpected,
      };
    },
  };
}

// A closed loop of `concurrency` callers, each issuing its next call when the previous one answers:
// what autocannon does with connections, for a client that is not HTTP (the MCP SDK client).
export async function closedLoop({ concurrency, durationS, call, isExpected }) {
  const tally = callTally(isExpected);
  const end = performance.now() + durationS * 1000;
  const caller = async () => {
    while (performance.now() < end) await tally.time(call, performance.now());
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  return tally.result();
}

// An open loop: calls sent at a steady `rate` per second whatever the answers, as a tenant's ordinary
// traffic arrives. Each call's latency counts from when it was due, not when it was sent, so a client held
// back by slow answers (coordinated omission) still counts the wait.
export async function openLoop({ rate, durationS, call, isExpected }) {
  const tally = callTally(isExpected);
  const interval = 1000 / rate;
  const started = performance.now();
  const total = Math.floor(durationS * rate);
  const inFlight = [];
  for (let i = 0; i < total; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(tally.time(call, due));
  }
  await Promise.all(inFlight);
  return tally.result();
}
