import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { AppError } from '../../common/errors/app-error.js';
import { readWorkspaceFile } from '../fs/workspace-file.reader.js';
import { WorkspaceFsError } from '../fs/workspace-fs.error.js';
import { ReadThreads } from './read-threads.js';

let base: string;
let root: string;
let threads: ReadThreads;

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-read-threads-')));
  root = join(base, 'ws');
  await mkdir(join(root, 'src'), { recursive: true });
  await writeFile(join(root, 'src/a.txt'), Array.from({ length: 50 }, (_, i) => `line ${i + 1}\n`).join(''));
  await writeFile(join(root, 'bin'), Buffer.from([0, 1, 2, 3]));
  await writeFile(join(base, 'secret'), 'outside');
  await symlink('../secret', join(root, 'escape'));
});

afterAll(() => rm(base, { recursive: true, force: true }));

afterEach(() => threads.close());

const opts = { maxBytes: 64, offset: 5, limit: 3 };

// The thread running the given slot, for the tests that must kill one.
const workerOf = (t: ReadThreads, slot: number) => (t as unknown as { threads: ({ worker: Worker } | null)[] }).threads[slot]!.worker;

describe('ReadThreads', () => {
  it('starts no thread before the first read, then answers exactly what a read on the event loop answers', async () => {
    threads = new ReadThreads(2);
    expect(threads.running).toBe(0);
    const onThread = await threads.readFile(root, 'src/a.txt', opts);
    expect(threads.running).toBe(1);
    expect(onThread).toEqual(await readWorkspaceFile(root, 'src/a.txt', opts));
    expect(onThread.content).toBe('line 5\nline 6\nline 7\n');
  });

  it('spreads concurrent reads over its threads and answers each one its own file', async () => {
    threads = new ReadThreads(2);
    const reads = await Promise.all(
      Array.from({ length: 40 }, (_, i) => threads.readFile(root, 'src/a.txt', { maxBytes: 64, offset: i + 1, limit: 1 })),
    );
    expect(threads.running).toBe(2);
    expect(reads.map((r) => r.content)).toEqual(Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`));
  });

  it('brings refusals back as the same error class, code and status', async () => {
    threads = new ReadThreads(1);
    const escape: unknown = await threads.readFile(root, 'escape', opts).catch((e: unknown) => e);
    expect(escape).toBeInstanceOf(AppError);
    expect(escape).toMatchObject({ status: 403, code: 'path_outside_workspace', details: { path: 'escape' } });
    for (const [path, code] of [
      ['bin', 'binary_file'],
      ['missing.txt', 'not_found'],
      ['src', 'is_directory'],
    ]) {
      const err: unknown = await threads.readFile(root, path, opts).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkspaceFsError);
      expect(err).toMatchObject({ code });
    }
  });

  it('fails the reads a dying thread held, and starts a new thread for the next read', async () => {
    threads = new ReadThreads(1);
    await threads.readFile(root, 'src/a.txt', opts);
    const first = workerOf(threads, 0);
    const held = threads.readFile(root, 'src/a.txt', opts);
    await first.terminate();
    await expect(held).rejects.toThrow(/file read thread exited/);
    await expect(held).rejects.toMatchObject({ code: 'io_error' });
    await expect(threads.readFile(root, 'src/a.txt', opts)).resolves.toMatchObject({ content: 'line 5\nline 6\nline 7\n' });
    expect(workerOf(threads, 0)).not.toBe(first);
  });

  it('refuses reads once closed', async () => {
    threads = new ReadThreads(1);
    await threads.readFile(root, 'src/a.txt', opts);
    await threads.close();
    expect(threads.running).toBe(0);
    await expect(threads.readFile(root, 'src/a.txt', opts)).rejects.toThrow(/shutting down/);
  });

  it('reads on the event loop with 0 threads', async () => {
    threads = new ReadThreads(0);
    expect(await threads.readFile(root, 'src/a.txt', opts)).toMatchObject({ content: 'line 5\nline 6\nline 7\n' });
    expect(threads.running).toBe(0);
  });
});
