import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { callTool, EventStream } from './tool-test-kit.js';

const READ_MAX_BYTES = 1024;

describe('file tools', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp({ env: { READ_FILE_MAX_BYTES: String(READ_MAX_BYTES) } });
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  // A fresh project per test: its own empty workspace.
  const workspace = async () => {
    const { id } = await t.createProject(tenant);
    const dir = t.workspaceOf(id);
    const call = (tool: string, args: unknown) => callTool(t, tenant, id, tool, args);
    const ok = async (tool: string, args: unknown) => {
      const res = await call(tool, args).expect(200);
      expect({ status: res.body.status, error: res.body.error }).toEqual({ status: 'ok', error: undefined });
      return res.body.result;
    };
    const failed = async (tool: string, args: unknown) => {
      const res = await call(tool, args).expect(200);
      expect(res.body.status).toBe('error');
      return res.body.error as { code: string; message: string; retryable: boolean };
    };
    return { id, dir, call, ok, failed, at: (p: string) => path.join(dir, p) };
  };

  describe('read_file', () => {
    it('reads a window of lines with offset and limit, and reports the total', async () => {
      const w = await workspace();
      await writeFile(w.at('notes.txt'), 'alpha\nbeta\ngamma\ndelta\n');
      expect(await w.ok('read_file', { path: 'notes.txt' })).toEqual({
        path: 'notes.txt',
        encoding: 'utf8',
        size: 23,
        content: 'alpha\nbeta\ngamma\ndelta\n',
        truncated: false,
        totalLines: 4,
      });
      const window = await w.ok('read_file', { path: 'notes.txt', offset: 2, limit: 2 });
      expect(window).toMatchObject({ content: 'beta\ngamma\n', truncated: true, nextOffset: 4 });
      expect(window.hint).toMatch(/offset: 4/);
      const past = await w.ok('read_file', { path: 'notes.txt', offset: 10 });
      expect(past).toMatchObject({ content: '', truncated: false, totalLines: 4 });
      expect(past.hint).toMatch(/past the end/);
    });

    it('cuts a long file at the byte cap with a hint, and reading on from nextOffset gives the rest exactly', async () => {
      const w = await workspace();
      const lines = Array.from({ length: 200 }, (_, i) => `line ${String(i + 1).padStart(3, '0')} ${'x'.repeat(20)}`);
      const text = `${lines.join('\n')}\n`;
      await writeFile(w.at('long.log'), text);
      let content = '';
      let offset = 1;
      let pages = 0;
      for (;;) {
        const page = await w.ok('read_file', { path: 'long.log', offset });
        expect(Buffer.byteLength(page.content)).toBeLessThanOrEqual(READ_MAX_BYTES);
        content += page.content;
        pages++;
        if (!page.truncated) break;
        expect(page.hint).toContain(`offset: ${page.nextOffset}`);
        expect(page.hint).toMatch(/capped at 1024 bytes/);
        offset = page.nextOffset;
      }
      expect(pages).toBeGreaterThan(5);
      expect(content).toBe(text);
    });

    it('refuses a binary file with an outcome pointing at base64, and returns its bytes with encoding base64', async () => {
      const w = await workspace();
      const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff, 0xfe, 0x0a]);
      await writeFile(w.at('logo.png'), bytes);
      const error = await w.failed('read_file', { path: 'logo.png' });
      expect(error).toEqual({ code: 'binary_file', message: expect.stringContaining('encoding: "base64"'), retryable: false });
      const result = await w.ok('read_file', { path: 'logo.png', encoding: 'base64' });
      expect(result).toMatchObject({ encoding: 'base64', truncated: false, size: bytes.length });
      expect(Buffer.from(result.content, 'base64')).toEqual(bytes);
    });

    it('answers a directory with an outcome that says to list it', async () => {
      const w = await workspace();
      await mkdir(w.at('src'));
      const error = await w.failed('read_file', { path: 'src' });
      expect(error.code).toBe('is_directory');
      expect(error.message).toMatch(/list_files/);
    });
  });

  describe('write_file', () => {
    it('creates a file, then replaces it, leaving no temporary file behind', async () => {
      const w = await workspace();
      expect(await w.ok('write_file', { path: 'config.json', content: '{"v":1}' })).toEqual({
        path: 'config.json',
        bytesWritten: 7,
        created: true,
      });
      expect(await w.ok('write_file', { path: 'config.json', content: '{"v":22}' })).toEqual({
        path: 'config.json',
        bytesWritten: 8,
        created: false,
      });
      expect(await readFile(w.at('config.json'), 'utf8')).toBe('{"v":22}');
      expect(await readdir(w.dir)).toEqual(['config.json']);
    });

    it('replaces atomically: a reader sees the old content or the new, never a mix', async () => {
      const w = await workspace();
      const size = 256 * 1024;
      const versions = ['a', 'b'].map((c) => c.repeat(size));
      await writeFile(w.at('data.txt'), versions[0]);
      let writing = true;
      const seen = new Set<string>();
      const reader = (async () => {
        while (writing) {
          const text = await readFile(w.at('data.txt'), 'utf8');
          seen.add(text === versions[0] ? 'a' : text === versions[1] ? 'b' : `mixed or partial (${text.length} chars)`);
        }
      })();
      for (let i = 1; i <= 12; i++) await w.ok('write_file', { path: 'data.txt', content: versions[i % 2] });
      writing = false;
      await reader;
      expect([...seen].sort()).toEqual(['a', 'b']);
    });

    it('creates missing parent directories only when createDirs is true', async () => {
      const w = await workspace();
      const error = await w.failed('write_file', { path: 'a/b/c.txt', content: 'deep' });
      expect(error.code).toBe('parent_not_found');
      await expect(stat(w.at('a'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect(await w.ok('write_file', { path: 'a/b/c.txt', content: 'deep', createDirs: true })).toMatchObject({
        path: 'a/b/c.txt',
        created: true,
      });
      expect(await readFile(w.at('a/b/c.txt'), 'utf8')).toBe('deep');
    });

    it('writes base64 content as raw bytes', async () => {
      const w = await workspace();
      const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
      expect(await w.ok('write_file', { path: 'blob.bin', content: bytes.toString('base64'), encoding: 'base64' })).toMatchObject({
        bytesWritten: 6,
      });
      expect(await readFile(w.at('blob.bin'))).toEqual(bytes);
    });

    it('refuses to write outside the workspace and creates nothing there', async () => {
      const w = await workspace();
      const res = await w.call('write_file', { path: '../escaped.txt', content: 'x' }).expect(403);
      expect(res.body.error.code).toBe('path_outside_workspace');
      await expect(stat(path.join(w.dir, '..', 'escaped.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    });
  });

  describe('list_files', () => {
    const tree = async () => {
      const w = await workspace();
      await mkdir(w.at('src/lib'), { recursive: true });
      await writeFile(w.at('README.md'), '# hi\n');
      await writeFile(w.at('.env'), 'SECRET=1\n');
      await writeFile(w.at('src/index.ts'), 'export {};\n');
      await writeFile(w.at('src/lib/util.ts'), 'export const x = 1;\n');
      await writeFile(w.at('src/lib/.cache'), '');
      return w;
    };
    const paths = (result: { entries: Array<{ path: string }> }) => result.entries.map((e) => e.path);

    it('lists the direct children, sorted, without hidden names unless asked', async () => {
      const w = await tree();
      const result = await w.ok('list_files', {});
      expect(result.path).toBe('.');
      expect(result.truncated).toBe(false);
      expect(result.entries).toEqual([
        { name: 'README.md', path: 'README.md', type: 'file', size: 5, modified: expect.any(String) },
        { name: 'src', path: 'src', type: 'directory', size: expect.any(Number), modified: expect.any(String) },
      ]);
      expect(paths(await w.ok('list_files', { includeHidden: true }))).toEqual(['.env', 'README.md', 'src']);
      expect(paths(await w.ok('list_files', { path: 'src' }))).toEqual(['src/index.ts', 'src/lib']);
    });

    it('lists recursively, bounded by maxDepth', async () => {
      const w = await tree();
      expect(paths(await w.ok('list_files', { recursive: true }))).toEqual([
        'README.md',
        'src',
        'src/index.ts',
        'src/lib',
        'src/lib/util.ts',
      ]);
      expect(paths(await w.ok('list_files', { recursive: true, includeHidden: true }))).toEqual([
        '.env',
        'README.md',
        'src',
        'src/index.ts',
        'src/lib',
        'src/lib/.cache',
        'src/lib/util.ts',
      ]);
      expect(paths(await w.ok('list_files', { recursive: true, maxDepth: 1 }))).toEqual(['README.md', 'src']);
    });

    it('gives sizes and times by default for one directory, and for a recursive listing only with details', async () => {
      const w = await tree();
      const recursive = await w.ok('list_files', { recursive: true, maxDepth: 1 });
      expect(recursive.entries).toEqual([
        { name: 'README.md', path: 'README.md', type: 'file' },
        { name: 'src', path: 'src', type: 'directory' },
      ]);
      const detailed = await w.ok('list_files', { recursive: true, maxDepth: 1, details: true });
      expect(detailed.entries[0]).toEqual({ name: 'README.md', path: 'README.md', type: 'file', size: 5, modified: expect.any(String) });
      const plain = await w.ok('list_files', { details: false });
      expect(plain.entries[0]).toEqual({ name: 'README.md', path: 'README.md', type: 'file' });
    });

    it('stops at the limit and marks the listing truncated', async () => {
      const w = await tree();
      const result = await w.ok('list_files', { recursive: true, limit: 3 });
      expect(paths(result)).toEqual(['README.md', 'src', 'src/index.ts']);
      expect(result.truncated).toBe(true);
    });

    it('answers a missing directory with a not_found outcome', async () => {
      const w = await tree();
      expect((await w.failed('list_files', { path: 'nope', recursive: true })).code).toBe('not_found');
    });
  });

  describe('delete_file', () => {
    it('deletes a file', async () => {
      const w = await workspace();
      await writeFile(w.at('old.txt'), 'bye');
      expect(await w.ok('delete_file', { path: 'old.txt' })).toEqual({ path: 'old.txt', type: 'file' });
      await expect(stat(w.at('old.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('deletes a directory only with recursive: true', async () => {
      const w = await workspace();
      await mkdir(w.at('build/assets'), { recursive: true });
      await writeFile(w.at('build/assets/app.js'), '1');
      const error = await w.failed('delete_file', { path: 'build' });
      expect(error.code).toBe('is_directory');
      expect(error.message).toMatch(/recursive: true/);
      expect(await readFile(w.at('build/assets/app.js'), 'utf8')).toBe('1');
      expect(await w.ok('delete_file', { path: 'build', recursive: true })).toEqual({ path: 'build', type: 'directory' });
      expect(await readdir(w.dir)).toEqual([]);
    });

    it('never deletes the workspace root, however it is named', async () => {
      const w = await workspace();
      await mkdir(w.at('src'));
      await writeFile(w.at('keep.txt'), 'keep');
      for (const p of ['.', './', w.dir, `${w.dir}/`, 'src/..']) {
        const res = await w.call('delete_file', { path: p, recursive: true });
        expect({ path: p, status: res.status, code: res.body.error?.code }).toEqual({ path: p, status: 403, code: 'workspace_root' });
      }
      for (const [p, status] of [
        ['/', 403],
        ['', 422],
      ] as const) {
        const res = await w.call('delete_file', { path: p, recursive: true });
        expect({ path: p, status: res.status }).toEqual({ path: p, status });
      }
      expect(await readFile(w.at('keep.txt'), 'utf8')).toBe('keep');
    });

    it('answers a missing path with a not_found outcome', async () => {
      const w = await workspace();
      expect((await w.failed('delete_file', { path: 'ghost.txt' })).code).toBe('not_found');
    });
  });

  describe('a heavy listing', () => {
    it('runs in the worker pool while /health/live keeps answering', async () => {
      const w = await workspace();
      // 30 directories of 1,000 files each, made by one shell rather than 30,000 calls.
      await promisify(execFile)(
        'sh',
        ['-c', 'for d in $(seq -w 1 30); do mkdir "d$d" && (cd "d$d" && touch $(seq -f "file-%04g.txt" 1 1000)); done'],
        {
          cwd: w.dir,
        },
      );
      const port = t.port;
      const events = await EventStream.open(port, w.id, tenant);
      try {
        const finished: string[] = [];
        const listing = w.call('list_files', { recursive: true, limit: 10_000 }).then((res) => {
          finished.push('listing');
          return res;
        });
        // The listing has reached its executor before the liveness probes start.
        await events.next((e) => e.event === 'tool.started' && e.data.tool === 'list_files');
        for (let i = 0; i < 5; i++) {
          const live = await t.http.get('/health/live');
          expect(live.status).toBe(200);
          finished.push(`live ${i}`);
        }
        const res = await listing;
        expect(finished).toEqual(['live 0', 'live 1', 'live 2', 'live 3', 'live 4', 'listing']);
        expect(res.body.status).toBe('ok');
        expect(res.body.result.entries).toHaveLength(10_000);
        expect(res.body.result.truncated).toBe(true);
        expect(res.body.result.entries[1].path).toBe('d01/file-0001.txt');
      } finally {
        events.close();
      }
    }, 60_000);
  });
});
