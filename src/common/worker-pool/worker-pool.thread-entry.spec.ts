import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { readFile } from 'node:fs/promises';
import { resolveWorkerEntry, WorkerPool } from './worker-pool.js';
import type { ErrorCodec } from './worker-error.codec.js';

// Closing a pool whose warm threads are still loading their entry must not take the process down. Node loads
// an ES module required by a thread synchronously, and a terminate inside that load aborted the process
// (see thread-entry.cts). The entry here is a graph of 2,000 modules, so that the window is wide enough to
// hit in a few tries: with the entry loaded by require(), this test failed 4 times in 5.
const MODULES = 2000;
const CLOSES = 20;

// Runs in a child process, so that an abort is an exit code here, not the loss of the test runner.
const child = `
const [workerPool, entry, closes] = process.argv.slice(1);
const { WorkerPool } = await import(workerPool);
const errors = { unwrap: (outcome) => outcome.value };
let started = performance.now();
const first = new WorkerPool({ entry, errors, threads: 1, warmThreads: 1 });
await first.run('any', {});
const load = performance.now() - started;
await first.close();
for (let i = 0; i < Number(closes); i++) {
  const pool = new WorkerPool({ entry, errors, threads: 1, warmThreads: 1 });
  await new Promise((resolve) => setTimeout(resolve, load * (0.5 + (0.5 * i) / Number(closes))));
  await pool.close();
}
console.log('closed ' + closes + ' pools; a thread took ' + Math.round(load) + ' ms to load');
`;

interface ChildRun {
  code?: number | string;
  signal?: string | null;
  stdout?: string;
  stderr?: string;
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-pool-close-'));
  await writeFile(join(dir, 'package.json'), '{"type":"module"}');
  const exports = Array.from({ length: 20 }, (_, j) => `export const v${j} = ${j};`).join('\n');
  await Promise.all(Array.from({ length: MODULES }, (_, i) => writeFile(join(dir, `m${i}.js`), exports)));
  const reexports = Array.from({ length: MODULES }, (_, i) => `export * as m${i} from './m${i}.js';`).join('\n');
  await writeFile(join(dir, 'entry.js'), `${reexports}\nexport async function runTask() { return { ok: true, value: 1 }; }\n`);
  // An entry that says when a thread has loaded it.
  await writeFile(
    join(dir, 'marking-entry.js'),
    `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(join(dir, 'loaded.txt'))}, 'loaded\\n');\nexport async function runTask() { return { ok: true, value: 1 }; }\n`,
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('closes pools whose warm threads are still loading their entry, without aborting the process', async () => {
  const workerPool = pathToFileURL(resolveWorkerEntry(import.meta.url, 'worker-pool.js')).href;
  const run: ChildRun = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', child, workerPool, join(dir, 'entry.js'), String(CLOSES)],
    { env: { ...process.env, NODE_OPTIONS: '' } },
  ).catch((failure: ChildRun) => failure);
  expect({ code: run.code ?? 0, signal: run.signal ?? null, stderr: String(run.stderr).split('\n').slice(0, 3) }).toEqual({
    code: 0,
    signal: null,
    stderr: [''],
  });
  console.log(run.stdout);
  expect(String(run.stdout)).toContain(`closed ${CLOSES} pools`);
}, 60_000);

// A warm thread is one that can run a task at once: its entry is loaded before it waits for tasks. A thread
// that waits in Atomics.wait with its import still running never finishes it until a task wakes it, and that
// task waits for the whole load (423-472 ms for a thread's first task here, idle threads or not).
it('loads the entry of each warm thread before any task is sent', async () => {
  const errors = { unwrap: (outcome: { value: unknown }) => outcome.value } as unknown as ErrorCodec;
  const pool = new WorkerPool({ entry: join(dir, 'marking-entry.js'), errors, threads: 2, warmThreads: 2 });
  const loaded = async () => (await readFile(join(dir, 'loaded.txt'), 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  try {
    // No task is sent: both threads load their entry on their own, well within this test's time.
    while ((await loaded()) < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await loaded()).toBe(2);
    expect(pool.running).toBe(2);
  } finally {
    await pool.close();
  }
}, 15_000);
