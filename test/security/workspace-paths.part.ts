import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { link, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { sandboxSupport } from '../support/sandbox.js';
import { AuditTrail, auditWriteFailures, type EntrySnapshot, expectRefusal, invoke, snapshot } from './security-helpers.js';

// docs/security-model.md, "Workspace paths" (cases 1-17), driven through the file tools and the shell's cwd over
// HTTP against real files. Everything a call must not reach lives in a separate temporary directory.

type AuditStatus = 'denied' | 'invalid_arguments';

describe('workspace paths through the tools', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let ws: string;
  let outside: string;
  let audit: AuditTrail;
  let socketServer: net.Server;
  let deviceCreated = false;
  const baseline: Record<string, EntrySnapshot[]> = {};
  const expectedRows: Array<{ tool: string; errorCode: string; status: AuditStatus }> = [];
  const SIBLINGS = ['-evil', '2', '.bak'];

  const call = (tool: string, args: unknown) => invoke(t, tenant, projectId, tool, args);
  const rel = (target: string) => path.relative(ws, target);
  const inWs = (...parts: string[]) => path.join(ws, ...parts);
  const inOutside = (...parts: string[]) => path.join(outside, ...parts);

  // Refused: the one error shape, and (checked by `settle`) an audit row, nothing outside changed, still serving.
  async function refuse(tool: string, args: Record<string, unknown>, status: number, code: string) {
    const res = await call(tool, args);
    expectRefusal(res, status, code);
    expectedRows.push({ tool, errorCode: code, status: code === 'invalid_arguments' ? 'invalid_arguments' : 'denied' });
    return res;
  }

  // Tools that ran answer 200 with their outcome; anything else is a test failure with the body shown.
  async function ran(tool: string, args: Record<string, unknown>) {
    const res = await call(tool, args);
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: expect.objectContaining({ tool }) });
    return res.body as { status: string; result?: Record<string, unknown>; error?: { code: string; message: string } };
  }

  const places = () => ({
    outside: snapshot(outside),
    tmp: snapshot(t.tmpDir, { depth: 1 }),
    workspaces: snapshot(t.config.workspace.root!, { depth: 1 }),
    ...Object.fromEntries(SIBLINGS.map((s) => [`sibling${s}`, snapshot(`${ws}${s}`)])),
  });

  async function settle() {
    for (const status of ['denied', 'invalid_arguments'] as const) {
      const rows = expectedRows.filter((r) => r.status === status);
      await audit.expectRows(status, rows);
    }
    expectedRows.length = 0;
    for (const [name, taken] of Object.entries(places())) expect({ [name]: await taken }).toEqual({ [name]: baseline[name] });
    const alive = await ran('read_file', { path: 'README.md' });
    expect(alive.result).toMatchObject({ content: '# hello\n' });
    await t.http.get('/health/ready').expect(200);
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { READ_FILE_MAX_BYTES: '4096' } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['touch', 'pwd'] })).id;
    ws = t.workspaceOf(projectId);
    audit = new AuditTrail(t, tenant, projectId);
    outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'toolgate-outside-')));

    await writeFile(inOutside('secret.txt'), 'top secret');
    await writeFile(inOutside('hard-target.txt'), 'shared inode');
    await mkdir(inOutside('race-target'));
    await writeFile(inOutside('race-target', 'f.txt'), 'outside original');

    await mkdir(inWs('src'), { recursive: true });
    await writeFile(inWs('README.md'), '# hello\n');
    await writeFile(inWs('canary.txt'), 'still here');
    await writeFile(inWs('src', 'index.ts'), 'export {};\n');
    for (const suffix of SIBLINGS) {
      await mkdir(`${ws}${suffix}`, { recursive: true });
      await writeFile(`${ws}${suffix}/x`, 'sibling');
    }
    await symlink(inOutside('secret.txt'), inWs('leak.txt'));
    await symlink(rel(inOutside('secret.txt')), inWs('leak-rel.txt'));
    await symlink(outside, inWs('outdir'));
    await symlink(rel(outside), inWs('outdir-rel'));
    await symlink(inOutside('not-yet.txt'), inWs('dangle'));
    await symlink(rel(inOutside('not-yet.txt')), inWs('dangle-rel'));
    await symlink('nowhere/x.txt', inWs('dangle-in'));
    await link(inOutside('hard-target.txt'), inWs('hard.txt'));
    await mkdir(inWs('hard-dir', 'nested'), { recursive: true });
    await writeFile(inWs('hard-dir', 'plain.txt'), 'plain');
    await link(inOutside('hard-target.txt'), inWs('hard-dir', 'nested', 'shared.txt'));
    execFileSync('mkfifo', [inWs('pipe')]);
    await symlink('pipe', inWs('pipe-link'));
    socketServer = net.createServer();
    await new Promise<void>((resolve) => socketServer.listen(inWs('sock'), resolve));
    try {
      execFileSync('mknod', [inWs('zero'), 'c', '1', '5'], { stdio: 'ignore' });
      deviceCreated = true;
    } catch {
      // No CAP_MKNOD here: the device case is covered through a symlink to /dev/zero only.
    }
    await symlink('/dev/zero', inWs('devzero'));
    await mkdir(inWs('race'));
    await writeFile(inWs('race', 'f.txt'), 'inside');
    await mkdir(inWs('loop'));
    await symlink('.', inWs('loop', 'self'));
    await symlink('..', inWs('loop', 'up'));
    await symlink('b', inWs('loop', 'a'));
    await symlink('a', inWs('loop', 'b'));
    await symlink(outside, inWs('loop', 'out'));

    for (const [name, taken] of Object.entries(places())) baseline[name] = await taken;
    await audit.skip();
  });

  // A failed test must not leave its rows to the next one.
  beforeEach(async () => {
    expectedRows.length = 0;
    await audit.skip();
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => socketServer.close(() => resolve()));
    await t.close();
    await rm(outside, { recursive: true, force: true });
  }, 60_000);

  it("[sec-01] refuses '../' climbs out of the workspace in every file tool and the shell's cwd", async () => {
    const res = await refuse('read_file', { path: '../../etc/passwd' }, 403, 'path_outside_workspace');
    expect(res.body.error.message).toContain('../../etc/passwd');
    expect(JSON.stringify(res.body)).not.toContain('root:');
    await refuse('read_file', { path: rel(inOutside('secret.txt')) }, 403, 'path_outside_workspace');
    await refuse('read_file', { path: 'src/../../x' }, 403, 'path_outside_workspace');
    await refuse('write_file', { path: rel(inOutside('secret.txt')), content: 'pwned' }, 403, 'path_outside_workspace');
    await refuse('write_file', { path: rel(inOutside('created.txt')), content: 'pwned', createDirs: true }, 403, 'path_outside_workspace');
    await refuse('delete_file', { path: rel(inOutside('secret.txt')) }, 403, 'path_outside_workspace');
    await refuse('delete_file', { path: rel(outside), recursive: true }, 403, 'path_outside_workspace');
    await refuse('list_files', { path: '../..' }, 403, 'path_outside_workspace');
    await refuse('list_files', { path: rel(outside), recursive: true }, 403, 'path_outside_workspace');
    await refuse('shell_exec', { argv: ['touch', 'sec01-marker'], cwd: '../..' }, 403, 'path_outside_workspace');
    await refuse('shell_exec', { argv: ['touch', 'sec01-marker'], cwd: rel(outside) }, 403, 'path_outside_workspace');
    expect(existsSync(path.join(t.tmpDir, 'sec01-marker'))).toBe(false);
    await settle();
  });

  it('[sec-02] refuses absolute paths outside the workspace in every tool', async () => {
    const res = await refuse('read_file', { path: '/etc/passwd' }, 403, 'path_outside_workspace');
    expect(JSON.stringify(res.body)).not.toContain('root:');
    await refuse('read_file', { path: inOutside('secret.txt') }, 403, 'path_outside_workspace');
    await refuse('read_file', { path: `${ws}/../${path.basename(ws)}/README.md` }, 403, 'path_outside_workspace');
    await refuse('write_file', { path: inOutside('new.txt'), content: 'pwned' }, 403, 'path_outside_workspace');
    await refuse('write_file', { path: inOutside('secret.txt'), content: 'pwned' }, 403, 'path_outside_workspace');
    await refuse('delete_file', { path: inOutside('secret.txt') }, 403, 'path_outside_workspace');
    await refuse('list_files', { path: outside }, 403, 'path_outside_workspace');
    await refuse('list_files', { path: '/' }, 403, 'path_outside_workspace');
    await refuse('shell_exec', { argv: ['pwd'], cwd: '/etc' }, 403, 'path_outside_workspace');
    await refuse('shell_exec', { argv: ['touch', 'sec02-marker'], cwd: outside }, 403, 'path_outside_workspace');
    await settle();
  });

  it('[sec-02] accepts an absolute path inside the workspace in every tool', async () => {
    expect((await ran('write_file', { path: inWs('abs.txt'), content: 'absolute' })).result).toMatchObject({
      path: 'abs.txt',
      created: true,
    });
    expect((await ran('read_file', { path: inWs('abs.txt') })).result).toMatchObject({ path: 'abs.txt', content: 'absolute' });
    const listed = await ran('list_files', { path: ws });
    expect((listed.result!.entries as Array<{ path: string }>).map((e) => e.path)).toContain('abs.txt');
    const pwd = await ran('shell_exec', { argv: ['pwd'], cwd: inWs('src') });
    // Inside the sandbox the workspace is /workspace: the command never sees the host path.
    expect(pwd.result).toMatchObject({ exitCode: 0, stdout: sandboxSupport.available ? '/workspace/src\n' : `${inWs('src')}\n` });
    expect((await ran('delete_file', { path: inWs('abs.txt') })).result).toEqual({ path: 'abs.txt', type: 'file' });
    expect(existsSync(inWs('abs.txt'))).toBe(false);
    await settle();
  });

  it.each(SIBLINGS)('[sec-03] refuses the sibling <workspace>%s that shares the prefix, absolute or relative', async (suffix) => {
    const sibling = `${ws}${suffix}`;
    const relative = `../${path.basename(ws)}${suffix}/x`;
    for (const p of [`${sibling}/x`, relative]) {
      await refuse('read_file', { path: p }, 403, 'path_outside_workspace');
      await refuse('write_file', { path: p, content: 'pwned' }, 403, 'path_outside_workspace');
      await refuse('delete_file', { path: p }, 403, 'path_outside_workspace');
    }
    await refuse('list_files', { path: sibling }, 403, 'path_outside_workspace');
    await refuse('shell_exec', { argv: ['touch', 'sec03-marker'], cwd: sibling }, 403, 'path_outside_workspace');
    expect(await readFile(`${sibling}/x`, 'utf8')).toBe('sibling');
    await settle();
  });

  it('[sec-04] refuses to read, write or list through a symlink to a file outside (absolute or relative target)', async () => {
    for (const name of ['leak.txt', 'leak-rel.txt']) {
      const res = await refuse('read_file', { path: name }, 403, 'path_outside_workspace');
      expect(JSON.stringify(res.body)).not.toContain('top secret');
      await refuse('read_file', { path: inWs(name) }, 403, 'path_outside_workspace');
      await refuse('write_file', { path: name, content: 'pwned' }, 403, 'path_outside_workspace');
      await refuse('list_files', { path: name }, 403, 'path_outside_workspace');
    }
    await settle();
  });

  it('[sec-04] delete_file on a symlink to outside removes the link only, never its target', async () => {
    await symlink(inOutside('secret.txt'), inWs('leak-to-delete'));
    expect((await ran('delete_file', { path: 'leak-to-delete' })).result).toEqual({ path: 'leak-to-delete', type: 'symlink' });
    expect(existsSync(inWs('leak-to-delete'))).toBe(false);
    await settle();
  });

  it('[sec-05] refuses to write link/new.txt through a symlinked directory pointing outside; nothing is created there', async () => {
    for (const dir of ['outdir', 'outdir-rel']) {
      await refuse('write_file', { path: `${dir}/new.txt`, content: 'pwned' }, 403, 'path_outside_workspace');
      await refuse('write_file', { path: `${dir}/sub/new.txt`, content: 'pwned', createDirs: true }, 403, 'path_outside_workspace');
      await refuse('write_file', { path: `${dir}/secret.txt`, content: 'pwned' }, 403, 'path_outside_workspace');
      await refuse('read_file', { path: `${dir}/secret.txt` }, 403, 'path_outside_workspace');
      await refuse('delete_file', { path: `${dir}/secret.txt` }, 403, 'path_outside_workspace');
      await refuse('list_files', { path: dir }, 403, 'path_outside_workspace');
      await refuse('list_files', { path: `${dir}/`, recursive: true }, 403, 'path_outside_workspace');
      await refuse('shell_exec', { argv: ['touch', 'sec05-marker'], cwd: dir }, 403, 'path_outside_workspace');
    }
    expect(existsSync(inOutside('new.txt'))).toBe(false);
    expect(existsSync(inOutside('sub'))).toBe(false);
    expect(existsSync(inOutside('sec05-marker'))).toBe(false);
    await settle();
  });

  it('[sec-06] refuses to write through a dangling symlink whose target is outside; nothing is created there', async () => {
    for (const name of ['dangle', 'dangle-rel']) {
      await refuse('write_file', { path: name, content: 'pwned' }, 403, 'path_outside_workspace');
      await refuse('write_file', { path: name, content: 'pwned', createDirs: true }, 403, 'path_outside_workspace');
    }
    // A dangling link whose target would be inside is refused too: the write goes to the target path instead.
    const res = await refuse('write_file', { path: 'dangle-in', content: 'x', createDirs: true }, 403, 'dangling_symlink');
    expect(res.body.error.message).toMatch(/symbolic link/);
    expect(existsSync(inOutside('not-yet.txt'))).toBe(false);
    expect(existsSync(inWs('nowhere'))).toBe(false);
    await settle();
  });

  it('[sec-07] never touches the outside file while the parent directory is swapped for a symlink in a loop during writes', async () => {
    // A separate process swaps ws/race <-> a symlink to the outside directory as fast as it can, for a bounded
    // number of rounds, while write_file calls through race/ run concurrently.
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
         const [dir, parked, target, rounds, ms] = process.argv.slice(1);
         const until = Date.now() + Number(ms);
         // write_file with createDirs may recreate race/ while it is parked; that copy is inside, so it goes.
         const clear = () => {
           try {
             if (fs.lstatSync(dir).isSymbolicLink()) fs.unlinkSync(dir);
             else fs.rmSync(dir, { recursive: true, force: true });
           } catch {}
         };
         let i = 0;
         for (; i < Number(rounds) && Date.now() < until; i++) {
           fs.renameSync(dir, parked);
           try { fs.symlinkSync(target, dir); } catch {}
           clear();
           for (;;) {
             try { fs.renameSync(parked, dir); break; } catch { clear(); }
           }
         }
         process.stdout.write(String(i));`,
        inWs('race'),
        inWs('race.parked'),
        inOutside('race-target'),
        '200000',
        '3000',
      ],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let rounds = '';
    swapper.stdout.on('data', (chunk: Buffer) => (rounds += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => swapper.on('exit', resolve));
    let running = true;
    void exited.then(() => (running = false));

    const outcomes = new Map<string, number>();
    let calls = 0;
    while (running && calls < 2000) {
      const batch = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          call(
            'write_file',
            i % 2 ? { path: 'race/f.txt', content: `pwned ${i}` } : { path: 'race/sub/f.txt', content: 'pwned', createDirs: true },
          ),
        ),
      );
      calls += batch.length;
      for (const res of batch) {
        const key =
          res.status === 200 ? `200 ${res.body.status} ${res.body.error?.code ?? ''}`.trim() : `${res.status} ${res.body.error?.code}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    }
    expect(await exited).toBe(0);
    expect(Number(rounds)).toBeGreaterThan(100);
    // Every answer is an outcome (written inside, or failed because race/ was away) or a refusal, never a 5xx.
    for (const key of outcomes.keys()) expect(key).toMatch(/^(200 ok|200 error [a-z_]+|403 path_outside_workspace)$/);
    // Some writes met the symlink (refused) and some the directory (written inside): the race really ran.
    expect(outcomes.get('403 path_outside_workspace') ?? 0).toBeGreaterThan(0);
    expect(outcomes.get('200 ok') ?? 0).toBeGreaterThan(0);
    expect(await readFile(inOutside('race-target', 'f.txt'), 'utf8')).toBe('outside original');
    expect(await readdir(inOutside('race-target'))).toEqual(['f.txt']);
    expect(existsSync(inWs('race.parked'))).toBe(false);
    // Each refused write is in the audit log like any other refusal.
    const refusedCount = outcomes.get('403 path_outside_workspace') ?? 0;
    expect((await audit.fresh('denied')).filter((r) => r.tool === 'write_file' && r.errorCode === 'path_outside_workspace')).toHaveLength(
      refusedCount,
    );
    await settle();
  }, 60_000);

  it('[sec-08] refuses to write or delete a file hard-linked to a file outside', async () => {
    const write = await refuse('write_file', { path: 'hard.txt', content: 'pwned' }, 403, 'hard_link');
    expect(write.body.error.message).toMatch(/hard link/);
    await refuse('delete_file', { path: 'hard.txt' }, 403, 'hard_link');
    await refuse('delete_file', { path: 'hard-dir', recursive: true }, 403, 'hard_link');
    expect(await readFile(inWs('hard.txt'), 'utf8')).toBe('shared inode');
    expect(await readFile(inWs('hard-dir', 'plain.txt'), 'utf8')).toBe('plain');
    expect(existsSync(inWs('hard-dir', 'nested', 'shared.txt'))).toBe(true);
    await settle();
  });

  it.each(['..\\..\\x', 'C:\\Windows\\x', '..\\..\\..\\..\\etc\\passwd'])(
    '[sec-10] treats %j as one literal name on POSIX, never as traversal',
    async (p) => {
      expect((await ran('write_file', { path: p, content: 'literal' })).result).toMatchObject({ path: p, created: true });
      expect(await readFile(path.join(ws, p), 'utf8')).toBe('literal');
      expect((await ran('read_file', { path: p })).result).toMatchObject({ content: 'literal' });
      expect((await ran('delete_file', { path: p })).result).toEqual({ path: p, type: 'file' });
      expect(existsSync(path.join(ws, p))).toBe(false);
      await settle();
    },
  );

  it.each(['..%2fx', '%2e%2e/x', '%252e%252e/x', '%2e%2e%2f%2e%2e%2fx'])(
    '[sec-11] treats %j as literal names, never traversal',
    async (p) => {
      expect((await ran('write_file', { path: p, content: 'literal', createDirs: true })).result).toMatchObject({ path: p });
      expect(await readFile(path.join(ws, p), 'utf8')).toBe('literal');
      expect((await ran('read_file', { path: p })).result).toMatchObject({ content: 'literal' });
      await ran('delete_file', { path: p.split('/')[0], recursive: true });
      await settle();
    },
  );

  it('[sec-12] keeps fullwidth dots and slashes, and NFD versus NFC spellings, as distinct literal names', async () => {
    for (const p of ['．．／x', '．．／．．／etc／passwd', '\u2025/x']) {
      expect((await ran('write_file', { path: p, content: 'literal', createDirs: true })).result).toMatchObject({ path: p });
      expect(await readFile(path.join(ws, p), 'utf8')).toBe('literal');
    }
    const nfc = 'caf\u00e9.txt';
    const nfd = 'cafe\u0301.txt';
    await ran('write_file', { path: nfc, content: 'composed' });
    const missing = await ran('read_file', { path: nfd });
    expect([missing.status, missing.error?.code]).toEqual(['error', 'not_found']);
    await ran('write_file', { path: nfd, content: 'decomposed' });
    expect(await readFile(path.join(ws, nfc), 'utf8')).toBe('composed');
    expect(await readFile(path.join(ws, nfd), 'utf8')).toBe('decomposed');
    for (const p of ['．．／x', '．．／．．／etc／passwd', '\u2025', nfc, nfd]) await ran('delete_file', { path: p, recursive: true });
    await settle();
  });

  it('[sec-13] refuses an 8 KiB path and 2,000 path segments with a 4xx in every tool, never a 500', async () => {
    const eightKiB = 'a/'.repeat(4096);
    const overSchema = 'a'.repeat(8193);
    const segments = Array.from({ length: 2000 }, () => 'a').join('/');
    for (const p of [eightKiB, segments]) {
      const res = await refuse('read_file', { path: p }, 400, 'invalid_path');
      expect(res.body.error.message).toMatch(/limit is/);
      expect(res.body.error.message.length).toBeLessThan(1024);
      await refuse('write_file', { path: p, content: 'x', createDirs: true }, 400, 'invalid_path');
      await refuse('delete_file', { path: p, recursive: true }, 400, 'invalid_path');
      await refuse('list_files', { path: p, recursive: true }, 400, 'invalid_path');
      await refuse('shell_exec', { argv: ['pwd'], cwd: p }, 400, 'invalid_path');
    }
    for (const tool of ['read_file', 'delete_file', 'list_files']) {
      const res = await refuse(tool, { path: overSchema }, 422, 'invalid_arguments');
      expect(res.body.error.issues).toEqual([expect.objectContaining({ path: '/path', keyword: 'maxLength' })]);
    }
    await refuse('write_file', { path: overSchema, content: 'x' }, 422, 'invalid_arguments');
    expect(existsSync(inWs('a'))).toBe(false);
    await settle();
  });

  it('[sec-14] refuses a FIFO, a socket and a device, directly or through a symlink, promptly', async () => {
    const started = Date.now();
    for (const name of ['pipe', 'pipe-link', 'sock', ...(deviceCreated ? ['zero'] : [])]) {
      const res = await refuse('read_file', { path: name }, 403, 'special_file');
      expect(res.body.error.message).toMatch(/FIFO|socket|device/);
      await refuse('read_file', { path: name, encoding: 'base64' }, 403, 'special_file');
      await refuse('write_file', { path: name, content: 'x' }, 403, 'special_file');
    }
    await refuse('read_file', { path: 'devzero' }, 403, 'path_outside_workspace');
    expect(Date.now() - started).toBeLessThan(10_000);
    await settle();
  });

  it('[sec-14] caps reads at READ_FILE_MAX_BYTES and says how to read on', async () => {
    await writeFile(inWs('big.txt'), 'line of text\n'.repeat(100_000));
    await writeFile(inWs('one-line.txt'), 'x'.repeat(1024 * 1024));
    const lines = (await ran('read_file', { path: 'big.txt' })).result!;
    expect(Buffer.byteLength(lines.content as string)).toBeLessThanOrEqual(4096);
    expect(lines).toMatchObject({ truncated: true, nextOffset: expect.any(Number), hint: expect.stringContaining('offset') });
    const long = (await ran('read_file', { path: 'one-line.txt' })).result!;
    expect([Buffer.byteLength(long.content as string) <= 4096, long.truncated]).toEqual([true, true]);
    const raw = (await ran('read_file', { path: 'one-line.txt', encoding: 'base64' })).result!;
    expect((raw.content as string).length).toBeLessThanOrEqual(4096);
    expect(raw.truncated).toBe(true);
    await rm(inWs('big.txt'));
    await rm(inWs('one-line.txt'));
    await settle();
  });

  it('[sec-15] refuses to delete ".", "", "/", or the workspace root itself; the workspace stays whole', async () => {
    for (const recursive of [false, true]) {
      await refuse('delete_file', { path: '.', recursive }, 403, 'workspace_root');
      await refuse('delete_file', { path: './', recursive }, 403, 'workspace_root');
      await refuse('delete_file', { path: 'src/..', recursive }, 403, 'workspace_root');
      await refuse('delete_file', { path: ws, recursive }, 403, 'workspace_root');
      await refuse('delete_file', { path: `${ws}/`, recursive }, 403, 'workspace_root');
      await refuse('delete_file', { path: '/', recursive }, 403, 'path_outside_workspace');
      const empty = await refuse('delete_file', { path: '', recursive }, 422, 'invalid_arguments');
      expect(empty.body.error.issues).toEqual([expect.objectContaining({ path: '/path' })]);
    }
    expect(await readFile(inWs('canary.txt'), 'utf8')).toBe('still here');
    expect(await readFile(inWs('src', 'index.ts'), 'utf8')).toBe('export {};\n');
    await settle();
  });

  it('[sec-16] lists recursively over symlink loops: finishes, bounded, links listed and never followed', async () => {
    const started = Date.now();
    const listed = await ran('list_files', { path: 'loop', recursive: true, includeHidden: true, maxDepth: 64 });
    expect(Date.now() - started).toBeLessThan(10_000);
    const entries = listed.result!.entries as Array<{ path: string; type: string }>;
    expect(entries).toEqual(
      ['loop/a', 'loop/b', 'loop/out', 'loop/self', 'loop/up'].map((p) => expect.objectContaining({ path: p, type: 'symlink' })),
    );
    const whole = await ran('list_files', { recursive: true, includeHidden: true, limit: 10_000 });
    const paths = (whole.result!.entries as Array<{ path: string }>).map((e) => e.path);
    expect(paths.length).toBeLessThan(200);
    expect(paths.filter((p) => /^(loop\/(self|up|out|a|b)|outdir|outdir-rel)\//.test(p))).toEqual([]);
    const cycle = await ran('read_file', { path: 'loop/a' });
    expect([cycle.status, cycle.error?.code]).toEqual(['error', 'symlink_loop']);
    const bounded = await ran('list_files', { recursive: true, includeHidden: true, limit: 3 });
    expect([(bounded.result!.entries as unknown[]).length, bounded.result!.truncated]).toEqual([3, true]);
    await settle();
  });

  it.each(['/', '/etc'])("[sec-17] refuses to point the project's workspacePath at %s; the tools keep the workspace", async (value) => {
    const res = await t.http.patch(`/v1/projects/${projectId}`).set(tenant.auth).send({ workspacePath: value });
    expectRefusal(res, 403, 'workspace_path_operator_only');
    const project = await t.http.get(`/v1/projects/${projectId}`).set(tenant.auth).expect(200);
    expect(project.body.workspacePath).toBeNull();
    const refusedRead = await refuse('read_file', { path: `${value === '/' ? '' : value}/passwd` }, 403, 'path_outside_workspace');
    expect(JSON.stringify(refusedRead.body)).not.toContain('root:');
    await settle();
  });

  // Last in the file: a NUL byte that reaches the audit log can stop the log from being written at all, which
  // would fail every later test of this app for a reason that is not theirs.
  it('[sec-09] refuses a NUL byte in a path in every tool, and audits the refusal', async () => {
    await refuse('read_file', { path: 'README.md\0.png' }, 400, 'invalid_path');
    await refuse('write_file', { path: 'x\0y', content: 'z' }, 400, 'invalid_path');
    await refuse('delete_file', { path: 'canary.txt\0' }, 400, 'invalid_path');
    await refuse('list_files', { path: 'src\0' }, 400, 'invalid_path');
    await refuse('shell_exec', { argv: ['touch', 'sec09-marker'], cwd: 'src\0' }, 400, 'invalid_path');
    expect(await readFile(inWs('canary.txt'), 'utf8')).toBe('still here');
    expect(existsSync(inWs('sec09-marker'))).toBe(false);
    expect(existsSync(inWs('x'))).toBe(false);
    expect(await auditWriteFailures(t)).toEqual([]);
    await settle();
  });

  it('[sec-09] answers a call whose other arguments hold a NUL byte in the one shape, with its audit row', async () => {
    // The file is written; the answer and the audit row must say so rather than fail afterwards.
    const res = await call('write_file', { path: 'nul-content.txt', content: 'a\0b' });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: expect.objectContaining({ status: 'ok' }) });
    expect(await readFile(inWs('nul-content.txt'), 'utf8')).toBe('a\0b');
    expect(await auditWriteFailures(t)).toEqual([]);
    const rows = await audit.rows('ok');
    expect(rows.some((r) => r.tool === 'write_file' && JSON.stringify(r.arguments).includes('nul-content.txt'))).toBe(true);
    await rm(inWs('nul-content.txt'));
    await settle();
  });
});
