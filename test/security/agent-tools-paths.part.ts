import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { link, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { AuditTrail, type EntrySnapshot, expectRefusal, invoke, snapshot } from './security-helpers.js';

// docs/security-model.md, "Workspace paths" (cases 1-17), for every path argument of edit_file (path),
// search_files (path), move_file (source and destination) and read_multiple_files (paths), over HTTP against
// real files. read_multiple_files answers each path on its own, so a refused path is a per-file error with the
// refusal's code, and the other files are still read.

type AuditStatus = 'denied' | 'invalid_arguments';
type Refusal = { status: number; code: string };

describe('workspace paths through edit_file, search_files, move_file and read_multiple_files', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let ws: string;
  let outside: string;
  let audit: AuditTrail;
  let socketServer: net.Server;
  const baseline: Record<string, EntrySnapshot[]> = {};
  const expectedRows: Array<{ tool: string; errorCode: string; status: AuditStatus }> = [];
  const SIBLINGS = ['-evil', '2', '.bak'];

  const call = (tool: string, args: unknown, extra: Record<string, unknown> = {}) => invoke(t, tenant, projectId, tool, args, extra);
  const rel = (target: string) => path.relative(ws, target);
  const inWs = (...parts: string[]) => path.join(ws, ...parts);
  const inOutside = (...parts: string[]) => path.join(outside, ...parts);

  async function refuse(tool: string, args: Record<string, unknown>, { status, code }: Refusal) {
    const res = await call(tool, args);
    expectRefusal(res, status, code);
    expectedRows.push({ tool, errorCode: code, status: code === 'invalid_arguments' ? 'invalid_arguments' : 'denied' });
    return res;
  }

  async function ran(tool: string, args: Record<string, unknown>) {
    const res = await call(tool, args);
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: expect.objectContaining({ tool }) });
    return res.body as { status: string; result?: Record<string, unknown>; error?: { code: string; message: string } };
  }

  // Every path argument of the new tools, refused with the same code. read_multiple_files keeps the refusal
  // with its path and still reads README.md beside it.
  async function refuseEverywhere(p: string, refusal: Refusal, options: { source?: string } = {}) {
    await refuse('edit_file', { path: p, edits: [{ oldText: 'a', newText: 'b' }] }, refusal);
    await refuse('search_files', { pattern: 'secret', path: p }, refusal);
    await refuse('move_file', { source: p, destination: 'moved.txt' }, refusal);
    await refuse('move_file', { source: options.source ?? 'canary.txt', destination: p, overwrite: true }, refusal);
    await refuse('move_file', { source: options.source ?? 'canary.txt', destination: p, createDirs: true }, refusal);
    const many = await ran('read_multiple_files', { paths: [p, 'README.md'] });
    expect(many.result).toMatchObject({
      read: 1,
      failed: 1,
      files: [
        { ok: false, path: p, error: { code: refusal.code } },
        { ok: true, path: 'README.md', content: '# hello\n' },
      ],
    });
    expect(JSON.stringify(many.result)).not.toMatch(/top secret|root:/);
  }

  const places = () => ({
    outside: snapshot(outside),
    tmp: snapshot(t.tmpDir, { depth: 1 }),
    workspaces: snapshot(t.config.workspace.root!, { depth: 1 }),
    ...Object.fromEntries(SIBLINGS.map((s) => [`sibling${s}`, snapshot(`${ws}${s}`)])),
  });

  // Refused calls are audited; nothing outside changed; the canary is where it was; the service still serves.
  async function settle() {
    for (const status of ['denied', 'invalid_arguments'] as const) {
      await audit.expectRows(
        status,
        expectedRows.filter((r) => r.status === status),
      );
    }
    expectedRows.length = 0;
    for (const [name, taken] of Object.entries(places())) expect({ [name]: await taken }).toEqual({ [name]: baseline[name] });
    expect(await readFile(inWs('canary.txt'), 'utf8')).toBe('still here');
    const alive = await ran('read_multiple_files', { paths: ['README.md'] });
    expect(alive.result).toMatchObject({ read: 1 });
    await t.http.get('/health/ready').expect(200);
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { READ_FILE_MAX_BYTES: '4096' } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
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
    for (const suffix of SIBLINGS) {
      await mkdir(`${ws}${suffix}`, { recursive: true });
      await writeFile(`${ws}${suffix}/x`, 'secret sibling');
    }
    await symlink(inOutside('secret.txt'), inWs('leak.txt'));
    await symlink(rel(inOutside('secret.txt')), inWs('leak-rel.txt'));
    await symlink(outside, inWs('outdir'));
    await symlink(rel(outside), inWs('outdir-rel'));
    await symlink(inOutside('not-yet.txt'), inWs('dangle'));
    await symlink(rel(inOutside('not-yet.txt')), inWs('dangle-rel'));
    await link(inOutside('hard-target.txt'), inWs('hard.txt'));
    execFileSync('mkfifo', [inWs('pipe')]);
    await symlink('pipe', inWs('pipe-link'));
    socketServer = net.createServer();
    await new Promise<void>((resolve) => socketServer.listen(inWs('sock'), resolve));
    await symlink('/dev/zero', inWs('devzero'));
    await mkdir(inWs('race'));
    await writeFile(inWs('race', 'f.txt'), 'inside secret');
    await mkdir(inWs('loop'));
    await symlink('.', inWs('loop', 'self'));
    await symlink('..', inWs('loop', 'up'));
    await symlink('b', inWs('loop', 'a'));
    await symlink('a', inWs('loop', 'b'));
    await symlink(outside, inWs('loop', 'out'));

    for (const [name, taken] of Object.entries(places())) baseline[name] = await taken;
    await audit.skip();
  });

  beforeEach(async () => {
    expectedRows.length = 0;
    await audit.skip();
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => socketServer.close(() => resolve()));
    await t.close();
    await rm(outside, { recursive: true, force: true });
  }, 60_000);

  const OUTSIDE: Refusal = { status: 403, code: 'path_outside_workspace' };

  it("[sec-01] refuses '../' climbs out of the workspace in every path argument", async () => {
    for (const p of ['../../etc/passwd', 'src/../../x', rel(inOutside('secret.txt'))]) await refuseEverywhere(p, OUTSIDE);
    await settle();
  });

  it('[sec-02] refuses absolute paths outside the workspace in every path argument', async () => {
    for (const p of ['/etc/passwd', inOutside('secret.txt'), `${ws}/../${path.basename(ws)}/README.md`]) await refuseEverywhere(p, OUTSIDE);
    await settle();
  });

  it('[sec-02] accepts absolute paths inside the workspace in every path argument', async () => {
    await writeFile(inWs('abs.txt'), 'absolute\n');
    expect((await ran('edit_file', { path: inWs('abs.txt'), edits: [{ oldText: 'absolute', newText: 'edited' }] })).result).toMatchObject({
      path: 'abs.txt',
    });
    expect((await ran('search_files', { pattern: 'edited', path: ws })).result).toMatchObject({ matches: [{ path: 'abs.txt', line: 1 }] });
    expect((await ran('read_multiple_files', { paths: [inWs('abs.txt')] })).result).toMatchObject({
      files: [{ ok: true, content: 'edited\n' }],
    });
    expect((await ran('move_file', { source: inWs('abs.txt'), destination: inWs('src', 'abs.txt') })).result).toMatchObject({
      destination: 'src/abs.txt',
    });
    await rm(inWs('src', 'abs.txt'));
    await settle();
  });

  it.each(SIBLINGS)('[sec-03] refuses the sibling <workspace>%s that shares the prefix, absolute or relative', async (suffix) => {
    for (const p of [`${ws}${suffix}/x`, `../${path.basename(ws)}${suffix}/x`]) await refuseEverywhere(p, OUTSIDE);
    await refuse('search_files', { pattern: 'secret', path: `${ws}${suffix}` }, OUTSIDE);
    await settle();
  });

  it('[sec-04] refuses to edit, search or read through a symlink to a file outside; a move moves the link only', async () => {
    for (const name of ['leak.txt', 'leak-rel.txt']) {
      await refuse('edit_file', { path: name, edits: [{ oldText: 'top', newText: 'pwned' }] }, OUTSIDE);
      await refuse('search_files', { pattern: 'secret', path: name }, OUTSIDE);
      const many = await ran('read_multiple_files', { paths: [name] });
      expect(many.result).toMatchObject({ files: [{ ok: false, error: { code: 'path_outside_workspace' } }] });
    }
    // A search of the whole workspace never reads through the links.
    const all = await ran('search_files', { pattern: 'top secret' });
    expect(all.result).toMatchObject({ matches: [] });
    expect((await ran('move_file', { source: 'leak.txt', destination: 'src/moved-leak' })).result).toMatchObject({ type: 'symlink' });
    expect(await readlink(inWs('src', 'moved-leak'))).toBe(inOutside('secret.txt'));
    await ran('move_file', { source: 'src/moved-leak', destination: 'leak.txt' });
    // Overwriting a link replaces the link, never the file it points to.
    await writeFile(inWs('replacement.txt'), 'replacement');
    expect((await ran('move_file', { source: 'replacement.txt', destination: 'leak-rel.txt', overwrite: true })).result).toMatchObject({
      overwritten: true,
    });
    expect(await readFile(inWs('leak-rel.txt'), 'utf8')).toBe('replacement');
    await rm(inWs('leak-rel.txt'));
    await symlink(rel(inOutside('secret.txt')), inWs('leak-rel.txt'));
    await settle();
  });

  it('[sec-05] refuses every path argument through a symlinked directory pointing outside; nothing is created there', async () => {
    for (const dir of ['outdir', 'outdir-rel']) {
      await refuseEverywhere(`${dir}/secret.txt`, OUTSIDE);
      await refuse('search_files', { pattern: 'secret', path: dir }, OUTSIDE);
      await refuse('move_file', { source: 'canary.txt', destination: `${dir}/new.txt` }, OUTSIDE);
      await refuse('move_file', { source: 'canary.txt', destination: `${dir}/sub/new.txt`, createDirs: true }, OUTSIDE);
      await refuse('move_file', { source: 'src', destination: `${dir}/src` }, OUTSIDE);
    }
    expect(existsSync(inOutside('new.txt'))).toBe(false);
    expect(existsSync(inOutside('sub'))).toBe(false);
    await settle();
  });

  it('[sec-06] refuses to edit or read through a dangling symlink to outside; a move over it replaces the link, creating nothing outside', async () => {
    for (const name of ['dangle', 'dangle-rel']) {
      await refuse('edit_file', { path: name, edits: [{ oldText: 'a', newText: 'b' }] }, OUTSIDE);
      const many = await ran('read_multiple_files', { paths: [name] });
      expect(many.result).toMatchObject({ files: [{ ok: false, error: { code: 'path_outside_workspace' } }] });
      const exists = await ran('move_file', { source: 'canary.txt', destination: name });
      expect(exists.error?.code).toBe('already_exists');
      // The link itself moves, inside the workspace.
      expect((await ran('move_file', { source: name, destination: `src/${name}` })).result).toMatchObject({ type: 'symlink' });
      expect((await ran('move_file', { source: `src/${name}`, destination: name })).result).toMatchObject({ type: 'symlink' });
    }
    await writeFile(inWs('over-dangle.txt'), 'inside');
    await ran('move_file', { source: 'over-dangle.txt', destination: 'dangle', overwrite: true });
    expect(await readFile(inWs('dangle'), 'utf8')).toBe('inside');
    expect(existsSync(inOutside('not-yet.txt'))).toBe(false);
    await rm(inWs('dangle'));
    await symlink(inOutside('not-yet.txt'), inWs('dangle'));
    await settle();
  });

  it('[sec-07] never touches the outside directory while race/ is swapped for a symlink during edits, moves and searches', async () => {
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
         const [dir, parked, target, ms] = process.argv.slice(1);
         const until = Date.now() + Number(ms);
         const clear = () => {
           try {
             if (fs.lstatSync(dir).isSymbolicLink()) fs.unlinkSync(dir);
             else fs.rmSync(dir, { recursive: true, force: true });
           } catch {}
         };
         let i = 0;
         for (; Date.now() < until; i++) {
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
    const leaked: string[] = [];
    let n = 0;
    while (running && n < 2000) {
      const batch = await Promise.all([
        call('edit_file', { path: 'race/f.txt', edits: [{ oldText: 'inside', newText: 'inside' }] }),
        call('edit_file', { path: 'race/f.txt', edits: [{ oldText: 'secret', newText: 'secret' }], dryRun: true }),
        call('move_file', { source: 'race/f.txt', destination: 'race/f.txt' }),
        call('move_file', { source: 'README.md', destination: `race/readme-${n}.md` }),
        call('search_files', { pattern: 'original', path: 'race' }),
        call('read_multiple_files', { paths: ['race/f.txt'] }),
      ]);
      n++;
      for (const res of batch) {
        const key =
          res.status === 200 ? `200 ${res.body.status} ${res.body.error?.code ?? ''}`.trim() : `${res.status} ${res.body.error?.code}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        if (JSON.stringify(res.body).includes('outside original')) leaked.push(JSON.stringify(res.body).slice(0, 200));
      }
      // README.md went into race/ when a move landed: bring it back for the next round and the others.
      if (!existsSync(inWs('README.md'))) {
        for (const name of (await readdir(inWs('race')).catch(() => [] as string[])).filter((f) => f.startsWith('readme-'))) {
          await rm(inWs('race', name), { force: true });
        }
        await writeFile(inWs('README.md'), '# hello\n');
      }
    }
    expect(await exited).toBe(0);
    expect(Number(rounds)).toBeGreaterThan(100);
    expect(leaked).toEqual([]);
    for (const key of outcomes.keys()) expect(key).toMatch(/^(200 ok|200 error [a-z_]+|403 path_outside_workspace)$/);
    expect(outcomes.get('403 path_outside_workspace') ?? 0).toBeGreaterThan(0);
    expect(outcomes.get('200 ok') ?? 0).toBeGreaterThan(0);
    expect(await readFile(inOutside('race-target', 'f.txt'), 'utf8')).toBe('outside original');
    expect(await readdir(inOutside('race-target'))).toEqual(['f.txt']);
    expect(existsSync(inWs('race.parked'))).toBe(false);
    await audit.fresh('denied');
    for (const name of await readdir(inWs('race'))) if (name !== 'f.txt') await rm(inWs('race', name), { force: true });
    await writeFile(inWs('race', 'f.txt'), 'inside secret');
    await settle();
  }, 60_000);

  it('[sec-08] refuses to edit, move or overwrite a file hard-linked to a file outside', async () => {
    const edit = await refuse(
      'edit_file',
      { path: 'hard.txt', edits: [{ oldText: 'shared', newText: 'pwned' }] },
      { status: 403, code: 'hard_link' },
    );
    expect(edit.body.error.message).toMatch(/hard link/);
    await refuse('move_file', { source: 'hard.txt', destination: 'moved.txt' }, { status: 403, code: 'hard_link' });
    await writeFile(inWs('other.txt'), 'other');
    await refuse('move_file', { source: 'other.txt', destination: 'hard.txt', overwrite: true }, { status: 403, code: 'hard_link' });
    await rm(inWs('other.txt'));
    expect(await readFile(inWs('hard.txt'), 'utf8')).toBe('shared inode');
    await settle();
  });

  it.each(['..\\..\\x', 'C:\\Windows\\x', '..%2fx', '%2e%2e', '%252e%252e', '．．／x', '\u2025', 'cafe\u0301.txt'])(
    '[sec-10][sec-11][sec-12] treats %j as one literal name in every path argument',
    async (p) => {
      await writeFile(inWs('literal-src.txt'), 'literal\n');
      expect((await ran('move_file', { source: 'literal-src.txt', destination: p })).result).toMatchObject({ destination: p });
      expect(await readFile(path.join(ws, p), 'utf8')).toBe('literal\n');
      expect((await ran('edit_file', { path: p, edits: [{ oldText: 'literal', newText: 'still literal' }] })).status).toBe('ok');
      expect((await ran('search_files', { pattern: 'still', path: p })).result).toMatchObject({ matches: [{ path: p, line: 1 }] });
      expect((await ran('read_multiple_files', { paths: [p] })).result).toMatchObject({
        files: [{ ok: true, content: 'still literal\n' }],
      });
      expect((await ran('move_file', { source: p, destination: 'literal-src.txt' })).status).toBe('ok');
      expect(existsSync(path.join(ws, p))).toBe(false);
      await rm(inWs('literal-src.txt'));
      await settle();
    },
  );

  it('[sec-12] keeps NFC and NFD spellings distinct', async () => {
    await writeFile(inWs('caf\u00e9.txt'), 'composed\n');
    const missing = await ran('edit_file', { path: 'cafe\u0301.txt', edits: [{ oldText: 'composed', newText: 'x' }] });
    expect(missing.error?.code).toBe('not_found');
    expect(await readFile(inWs('caf\u00e9.txt'), 'utf8')).toBe('composed\n');
    await rm(inWs('caf\u00e9.txt'));
    await settle();
  });

  it('[sec-13] refuses an 8 KiB path and 2,000 path segments with a 4xx in every path argument, never a 500', async () => {
    for (const p of ['a/'.repeat(4096), Array.from({ length: 2000 }, () => 'a').join('/')]) {
      await refuseEverywhere(p, { status: 400, code: 'invalid_path' });
    }
    const overSchema = 'a'.repeat(8193);
    await refuse('edit_file', { path: overSchema, edits: [{ oldText: 'a', newText: 'b' }] }, { status: 422, code: 'invalid_arguments' });
    await refuse('search_files', { pattern: 'x', path: overSchema }, { status: 422, code: 'invalid_arguments' });
    await refuse('move_file', { source: overSchema, destination: 'x' }, { status: 422, code: 'invalid_arguments' });
    await refuse('move_file', { source: 'canary.txt', destination: overSchema }, { status: 422, code: 'invalid_arguments' });
    await refuse('read_multiple_files', { paths: ['README.md', overSchema] }, { status: 422, code: 'invalid_arguments' });
    expect(existsSync(inWs('a'))).toBe(false);
    await settle();
  });

  it('[sec-14] refuses a FIFO, a socket and a device, directly or through a symlink, promptly; a search skips them', async () => {
    const started = Date.now();
    for (const name of ['pipe', 'pipe-link', 'sock']) {
      await refuse('edit_file', { path: name, edits: [{ oldText: 'a', newText: 'b' }] }, { status: 403, code: 'special_file' });
      await refuse('search_files', { pattern: 'x', path: name }, { status: 403, code: 'special_file' });
      const many = await ran('read_multiple_files', { paths: [name, 'README.md'] });
      expect(many.result).toMatchObject({ read: 1, files: [{ ok: false, error: { code: 'special_file' } }, { ok: true }] });
    }
    await refuse('edit_file', { path: 'devzero', edits: [{ oldText: 'a', newText: 'b' }] }, OUTSIDE);
    await refuse('search_files', { pattern: 'x', path: 'devzero' }, OUTSIDE);
    const whole = await ran('search_files', { pattern: 'hello' });
    expect(whole.result).toMatchObject({ matches: [{ path: 'README.md', line: 1 }] });
    expect(Date.now() - started).toBeLessThan(10_000);
    await settle();
  });

  it('[sec-15] refuses to move the workspace root or onto it', async () => {
    for (const p of ['.', './', 'src/..', ws, `${ws}/`]) {
      await refuse('move_file', { source: p, destination: 'elsewhere' }, { status: 403, code: 'workspace_root' });
      await refuse('move_file', { source: 'canary.txt', destination: p, overwrite: true }, { status: 403, code: 'workspace_root' });
    }
    await refuse('move_file', { source: '/', destination: 'elsewhere' }, OUTSIDE);
    await refuse('move_file', { source: '', destination: 'elsewhere' }, { status: 422, code: 'invalid_arguments' });
    await settle();
  });

  it('[sec-16] searches and lists with a glob over symlink loops: finishes, links never followed', async () => {
    const started = Date.now();
    const search = await ran('search_files', { pattern: 'secret', path: 'loop' });
    expect(search.result).toMatchObject({ matches: [], filesSearched: 0 });
    const listed = await ran('list_files', { path: 'loop', recursive: true, includeHidden: true, glob: '**' });
    expect((listed.result!.entries as Array<{ path: string }>).map((e) => e.path)).toEqual([
      'loop/a',
      'loop/b',
      'loop/out',
      'loop/self',
      'loop/up',
    ]);
    const whole = await ran('search_files', { pattern: 'secret', maxResults: 1000 });
    expect((whole.result!.matches as Array<{ path: string }>).map((m) => m.path)).toEqual(['race/f.txt']);
    expect(Date.now() - started).toBeLessThan(10_000);
    await settle();
  });

  it('[sec-17] keeps the new tools in the workspace after a workspacePath of /etc is refused', async () => {
    const res = await t.http.patch(`/v1/projects/${projectId}`).set(tenant.auth).send({ workspacePath: '/etc' });
    expectRefusal(res, 403, 'workspace_path_operator_only');
    await refuseEverywhere('/etc/passwd', OUTSIDE);
    await settle();
  });

  it('[sec-09] refuses a NUL byte in every path argument', async () => {
    await refuseEverywhere('canary.txt\0.png', { status: 400, code: 'invalid_path' }, { source: 'README.md' });
    await refuse('move_file', { source: 'canary.txt\0', destination: 'x' }, { status: 400, code: 'invalid_path' });
    await settle();
  });
});
