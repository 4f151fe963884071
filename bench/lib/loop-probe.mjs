import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { LatencyRecorder } from './stats.mjs';

export const LOOP_PROBE_METHOD =
  'measured from outside: round trips of GET /health/live, one at a time on a keep-alive connection, every 5 ms; ' +
  "a handler that does no I/O can only answer late when the service's event loop is busy, so the busy p99 minus " +
  'the idle p99 estimates the event-loop delay the load adds';

// Round-trip times of GET /health/live for `durationS`, one probe in flight at a time.
export async function probeLiveness(baseUrl, durationS, intervalMs = 5) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = new LatencyRecorder();
  const url = new URL('/health/live', baseUrl);
  const end = performance.now() + durationS * 1000;
  try {
    while (performance.now() < end) {
      const t0 = performance.now();
      await new Promise((resolve, reject) => {
        const req = http.get(url, { agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
      });
      latencies.record(performance.now() - t0);
      await sleep(intervalMs);
    }
  } finally {
    agent.destroy();
  }
  return { samples: latencies.count, ...latencies.summary() };
}

// Keeps `callers` requests in flight until `stop()` is called; counts the ones that answered as expected.
export function keepBusy({ callers, send }) {
  let stopped = false;
  let completed = 0;
  let failed = 0;
  const loops = Array.from({ length: callers }, async () => {
    while (!stopped) {
      try {
        if (await send()) completed++;
        else failed++;
      } catch {
        failed++;
      }
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return { completed, failed };
    },
  };
}
