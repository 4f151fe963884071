import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ResourceLimits } from 'node:worker_threads';
import { appWorkerErrors, type AppWorkerTasks } from './app-worker.tasks.js';
import { AppError } from './common/errors/app-error.js';
import { defaultThreadCount, resolveWorkerEntry, WorkerPool, workerResourceLimits } from './common/worker-pool/worker-pool.js';
import { listWorkspace, WorkspaceFsError } from './workspace/fs/workspace-fs.js';
import { columnsToListing } from './workspace/workspace-worker-tasks.js';
import { INLINE_LISTING_ENTRIES, listRecursively, listRecursivelyAsJson } from './workspace/recursive-listing.js';
import { JsonText } from './common/json/json-text.js';
import { measureJson } from './common/json/bounded-json.js';

// The generic pool, run with the app's own tasks and error codec (src/app-worker.*).
const ENTRY_FILE = 'app-worker.entry.js';
const appPool = (options: { threads: number; idleTimeoutMs?: number }) =>
  new WorkerPool<AppWorkerTasks>({ entry: resolveWorkerEntry(import.meta.url, ENTRY_FILE), errors: appWorkerErrors, ...options });

let base: string;
let root: string;
let pool: WorkerPool<AppWorkerTasks>;

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-pool-')));
  root = join(base, 'ws');
  await mkdir(root);
  pool = appPool({ threads: 2 });
});

afterAll(async () => {
  await pool.close();
  await rm(base, { recursive: true, force: true });
});

// Waits for a change made in the background (a thread exiting); the test's own timeout bounds the wait.
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

// Sparse, so the file costs no disk, yet hashing it takes many seconds.
async function makeHugeFile(): Promise<void> {
  const huge = await open(join(root, 'huge.bin'), 'w');
  await huge.truncate(64 * 1024 ** 3);
  await huge.close();
}

describe('resolveWorkerEntry', () => {
  it('uses the compiled entry in dist/ when running from TypeScript sources', () => {
    const entry = resolveWorkerEntry(import.meta.url, ENTRY_FILE);
    expect(entry).toMatch(/\/dist\/app-worker\.entry\.js$/);
  });

  it('uses the sibling entry when running compiled code', () => {
    const compiled = resolveWorkerEntry(import.meta.url, ENTRY_FILE);
    const sibling = pathToFileURL(join(compiled, '..', 'app-worker-pool.module.js')).href;
    expect(resolveWorkerEntry(sibling, ENTRY_FILE)).toBe(compiled);
  });

  it('says how to produce the compiled entry when it is missing', () => {
    expect(() => resolveWorkerEntry(pathToFileURL(join(base, 'src', 'x', 'worker-pool.ts')).href, ENTRY_FILE)).toThrow(
      /does not exist; compile the sources first with `npm run build`/,
    );
  });
});

describe('WorkerPool', () => {
  it('defaults to one thread less than the CPUs available, and at least two', () => {
    expect(defaultThreadCount()).toBe(Math.max(2, availableParallelism() - 1));
    expect(() => appPool({ threads: 0 })).toThrow(/at least 1/);
  });

  it('starts no thread before the first task, then only as many as the tasks need', async () => {
    const lazy = appPool({ threads: 2 });
    try {
      expect(lazy.running).toBe(0);
      await writeFile(join(root, 'lazy.txt'), 'abc');
      await expect(lazy.run('hashFile', { root, path: 'lazy.txt' })).resolves.toMatchObject({ size: 3 });
      expect(lazy.running).toBe(1);
    } finally {
      await lazy.close();
    }
  });

  it('keeps warm threads running from the start, idle or not', async () => {
    const warm = new WorkerPool<AppWorkerTasks>({
      entry: resolveWorkerEntry(import.meta.url, ENTRY_FILE),
      errors: appWorkerErrors,
      threads: 2,
      warmThreads: 2,
      idleTimeoutMs: 20,
    });
    try {
      await until(() => warm.running === 2);
      await writeFile(join(root, 'warm.txt'), 'ab');
      await expect(warm.run('hashFile', { root, path: 'warm.txt' })).resolves.toMatchObject({ size: 2 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(warm.running).toBe(2);
    } finally {
      await warm.close();
    }
  });

  it('lets a thread exit once it has been idle, and starts a new one for the next task', async () => {
    const idle = appPool({ threads: 1, idleTimeoutMs: 20 });
    try {
      await writeFile(join(root, 'idle.txt'), 'abcd');
      await idle.run('hashFile', { root, path: 'idle.txt' });
      expect(idle.running).toBe(1);
      await until(() => idle.running === 0);
      await expect(idle.run('hashFile', { root, path: 'idle.txt' })).resolves.toMatchObject({ size: 4 });
      expect(idle.running).toBe(1);
    } finally {
      await idle.close();
    }
  });

  it('runs its threads with a bounded young generation, unless told other limits', async () => {
    const entry = join(base, 'limits-entry.mjs');
    await writeFile(
      entry,
      "import { resourceLimits } from 'node:worker_threads';\nexport const runTask = async () => ({ ok: true, value: resourceLimits });\n",
    );
    type LimitsTask = { limits: (payload: object) => Promise<ResourceLimits> };
    const bounded = new WorkerPool<LimitsTask>({ threads: 1, entry, errors: appWorkerErrors });
    const custom = new WorkerPool<LimitsTask>({
      threads: 1,
      entry,
      errors: appWorkerErrors,
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 96 },
    });
    try {
      expect(await bounded.run('limits', {})).toMatchObject(workerResourceLimits);
      expect(await custom.run('limits', {})).toMatchObject({ maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 96 });
    } finally {
      await Promise.all([bounded.close(), custom.close()]);
    }
  });

  it('lists a tree of a few thousand files recursively on a worker thread', async () => {
    for (let d = 0; d < 30; d++) {
      const dir = join(root, 'tree', `dir-${String(d).padStart(2, '0')}`);
      await mkdir(dir, { recursive: true });
      await Promise.all(Array.from({ length: 100 }, (_, f) => writeFile(join(dir, `file-${String(f).padStart(3, '0')}.txt`), `${d}/${f}`)));
    }
    await symlink('..', join(root, 'tree', 'dir-00', 'loop'));
    // A name JSON escapes, and one of more bytes than characters.
    await writeFile(join(root, 'tree', 'dir-05', 'aé "q".txt'), 'x');
    // A name that is not UTF-8: listed escaped and flagged, the flag kept across the thread boundary.
    await writeFile(Buffer.concat([Buffer.from(join(root, 'tree', 'dir-06', 'b')), Buffer.from([0xff])]), 'x');
    for (const details of [false, true]) {
      const options = { limit: 10_000, maxDepth: 10, details };
      const viaPool = columnsToListing(await pool.run('listWorkspaceRecursive', { root, path: 'tree', options }));
      expect(viaPool.truncated).toBe(false);
      expect(viaPool.entries).toHaveLength(30 + 3000 + 3);
      expect(viaPool.entries.filter((entry) => entry.escapedName)).toEqual([
        expect.objectContaining({ name: 'b%FF', path: 'tree/dir-06/b%FF', type: 'file', escapedName: true }),
      ]);
      expect(viaPool.entries[0].path).toBe('tree/dir-00');
      expect(viaPool.entries.at(-1)!.path).toBe('tree/dir-29/file-099.txt');
      expect(viaPool.entries.at(-1)!.size).toBe(details ? '29/99'.length : undefined);
      expect(viaPool).toEqual(await listWorkspace(root, 'tree', { ...options, recursive: true }));
      // The same listing written as JSON on the thread, as the list_files tool takes it: the same text as
      // the rebuilt listing's, and its UTF-8 length.
      const asJson = await pool.run('listWorkspaceRecursiveJson', { root, path: 'tree', options, maxBytes: 32 * 1024 * 1024 });
      expect(asJson).toEqual({ text: JSON.stringify(viaPool), bytes: Buffer.byteLength(JSON.stringify(viaPool)) });
    }
  }, 30_000);

  // What the list_files tool gets: a tree past the inline budget as the JSON text the worker wrote (the
  // same JSON as the entries the other callers get), a small one as the entries, and one past the cap on
  // results as a result the caps drop, never written.
  it('answers a listing for the list_files tool as JSON text from the pool, as entries inline', async () => {
    const dir = join(root, 'for-answers');
    await mkdir(join(dir, 'big'), { recursive: true });
    await Promise.all(Array.from({ length: INLINE_LISTING_ENTRIES + 10 }, (_, i) => writeFile(join(dir, 'big', `f${i}.txt`), '')));
    await writeFile(join(dir, 'small.txt'), '');
    const options = { limit: 10_000 };
    const big = await listRecursivelyAsJson(pool, root, 'for-answers/big', options, 32 * 1024 * 1024);
    expect(big).toBeInstanceOf(JsonText);
    const entries = await listRecursively(pool, root, 'for-answers/big', options);
    expect((big as JsonText).text).toBe(JSON.stringify(entries));
    expect((big as JsonText).bytes).toBe(Buffer.byteLength(JSON.stringify(entries)));
    expect(measureJson(big, { maxDepth: 3, maxBytes: 32 * 1024 * 1024 })).toBe('fits');
    expect(measureJson(big, { maxDepth: 2, maxBytes: 32 * 1024 * 1024 })).toEqual({ exceeded: 'depth' });
    const small = await listRecursivelyAsJson(pool, root, 'for-answers', { limit: 10, maxDepth: 1 }, 32 * 1024 * 1024);
    expect(small).toEqual({
      path: 'for-answers',
      entries: [expect.objectContaining({ path: 'for-answers/big' }), expect.objectContaining({ path: 'for-answers/small.txt' })],
      truncated: false,
    });
    const capped = await listRecursivelyAsJson(pool, root, 'for-answers/big', options, 1024);
    expect(capped).toBeInstanceOf(JsonText);
    expect(measureJson(capped, { maxDepth: 256, maxBytes: 1024 })).toEqual({ exceeded: 'size' });
    expect(() => (capped as JsonText).text).toThrow(/not written/);
  });

  it('hashes a confined file on a worker thread', async () => {
    await writeFile(join(root, 'data.bin'), Buffer.alloc(3 * 1024 * 1024 + 17, 7));
    const expected = createHash('sha256')
      .update(Buffer.alloc(3 * 1024 * 1024 + 17, 7))
      .digest('hex');
    expect(await pool.run('hashFile', { root, path: 'data.bin' })).toEqual({
      path: 'data.bin',
      size: 3 * 1024 * 1024 + 17,
      sha256: expected,
    });
  });

  it('brings refusals and outcomes back as the same error classes', async () => {
    const refused = pool.run('hashFile', { root, path: '../outside' });
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(refused).rejects.toMatchObject({ status: 403, code: 'path_outside_workspace' });
    const missing = pool.run('hashFile', { root, path: 'missing.bin' });
    await expect(missing).rejects.toBeInstanceOf(WorkspaceFsError);
    await expect(missing).rejects.toMatchObject({ code: 'not_found' });
    // A name outside the table cannot be written in TypeScript; a caller that forces one gets a clear error.
    await expect(pool.run('noSuchTask' as 'hashFile', { root, path: 'x' })).rejects.toThrow("Unknown worker task 'noSuchTask'");
  });

  it('stops an aborted task promptly and keeps serving', async () => {
    await makeHugeFile();
    const controller = new AbortController();
    const task = pool.run('hashFile', { root, path: 'huge.bin' }, { signal: controller.signal });
    const settled = task.then(
      () => 'resolved',
      (err: Error) => err.name,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const abortedAt = Date.now();
    controller.abort();
    expect(await settled).toBe('AbortError');
    expect(Date.now() - abortedAt).toBeLessThan(1000);

    await writeFile(join(root, 'small.txt'), 'abc');
    await expect(pool.run('hashFile', { root, path: 'small.txt' })).resolves.toMatchObject({ size: 3 });
  }, 20_000);

  it('rejects at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const payload = { root, path: '', options: { limit: 1 } };
    const task = pool.run('listWorkspaceRecursive', payload, { signal: controller.signal });
    await expect(task).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('leaves no descriptors open after a worker is terminated by an abort', async () => {
    const openOnHugeFile = async () => {
      const targets = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
      return targets.filter((t) => t.endsWith('/huge.bin')).length;
    };
    await makeHugeFile();
    const controller = new AbortController();
    const task = pool.run('hashFile', { root, path: 'huge.bin' }, { signal: controller.signal }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await openOnHugeFile()).toBeGreaterThan(0);
    controller.abort();
    await task;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await openOnHugeFile()).toBe(0);
  }, 20_000);
});
