import autocannon from 'autocannon';
import { LatencyRecorder } from './stats.mjs';

// One autocannon run. Latencies come from its per-response event (float ms, every status), so p50/p99
// are exact and refusals (422) count like any answer. An answer is an error unless it has `expectStatus`
// and, when given, passes `checkBody` (e.g. a tool call answered 200 but with status "timeout").
export async function httpLoad({ url, method = 'GET', headers = {}, body, connections, durationS, expectStatus, checkBody, timeoutS = 60 }) {
  const latencies = new LatencyRecorder();
  let unexpected = 0;
  let bytes = 0;
  const target = new URL(url);
  const request = {
    method,
    path: target.pathname + target.search,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    onResponse(status, responseBody) {
      if (status !== expectStatus || (checkBody && !checkBody(responseBody))) unexpected++;
    },
  };
  const instance = autocannon({ url: target.origin, requests: [request], connections, duration: durationS, timeout: timeoutS });
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

// A closed loop of `concurrency` callers, each issuing its next call when the previous one answers:
// what autocannon does with connections, for a client that is not HTTP (the MCP SDK client).
export async function closedLoop({ concurrency, durationS, call, isExpected }) {
  const latencies = new LatencyRecorder();
  let unexpected = 0;
  const started = performance.now();
  const end = started + durationS * 1000;
  const caller = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      let ok;
      try {
        ok = isExpected(await call(), null);
      } catch (error) {
        ok = isExpected(null, error);
      }
      latencies.record(performance.now() - t0);
      if (!ok) unexpected++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const elapsedS = (performance.now() - started) / 1000;
  return { requests: latencies.count, rps: latencies.count / elapsedS, ...latencies.summary(), bytesPerResponse: null, errors: unexpected };
}
