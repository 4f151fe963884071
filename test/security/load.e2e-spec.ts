import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const loadScript = fileURLToPath(new URL('../../bench/load.mjs', import.meta.url));
const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

// The full run is `npm run load` (200 connections for 60 s); here a short one checks the same things but
// latency, which belongs to the benchmark rather than to a test on a shared machine.
onPostgres('[sec-45] mixed load (PostgreSQL only: the load run starts the compiled service on PostgreSQL)', () => {
  it('[sec-45] 50 connections of mixed calls for 5 s: no 5xx, no leaked fds or child processes, an audit row per answered invocation', () => {
    const run = spawnSync(process.execPath, [loadScript], {
      env: {
        ...process.env,
        LOAD_DATABASE_URL: process.env.TEST_DATABASE_URL,
        LOAD_DURATION: '5',
        LOAD_CONNECTIONS: '50',
        LOAD_WARMUP: '1',
        LOAD_P99_MS: '60000',
      },
      encoding: 'utf8',
      timeout: 120_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect({ exit: run.status, output }).toEqual({ exit: 0, output: expect.stringContaining('load: PASS') });
    for (const check of [
      'PASS  no 5xx',
      'PASS  open fds do not grow',
      'PASS  child processes do not grow',
      'PASS  audit rows = invocations answered',
    ]) {
      expect(output).toContain(check);
    }
  }, 130_000);
});
