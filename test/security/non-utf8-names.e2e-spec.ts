import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { invoke } from './security-helpers.js';

const MiB = 1024 * 1024;

// A command can create names that are not UTF-8 (`touch $'bad\xff.txt'`); they count in the quota, so the
// file tools must list and reach them, or a tenant could fill its quota with files it cannot delete.
describe('[sec-102] files whose names are not UTF-8', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let project: string;
  let workspace: string;
  const onDisk = (...parts: (string | number[])[]) =>
    Buffer.concat([Buffer.from(`${workspace}/`), ...parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p)))]);

  beforeAll(async () => {
    t = await createTestApp({ env: { WORKSPACE_QUOTA_BYTES: String(MiB) } });
    tenant = await t.createTenant();
    project = (await t.createProject(tenant)).id;
    workspace = t.workspaceOf(project);
  });

  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it('lists them escaped with a flag, reads and deletes them by that name, and the room they took is given back', async () => {
    // Past the workspace's quota on its own, made on disk as a command would make it.
    writeFileSync(onDisk('report', [0xff], '.txt'), `first line\n${'x'.repeat(1.5 * MiB)}\n`);
    mkdirSync(onDisk('dir', [0xfe]));
    writeFileSync(onDisk('dir', [0xfe], '/notes.txt'), 'needle here\n');
    // A name that is valid UTF-8 and only looks like an escape, next to the bytes it would decode to.
    writeFileSync(path.join(workspace, 'a%FF'), 'literal\n');
    writeFileSync(onDisk('a', [0xff]), 'bytes\n');

    const listing = await invoke(t, tenant, project, 'list_files', { recursive: true });
    expect(listing.body).toMatchObject({ status: 'ok' });
    // The two 'a%FF' come in either order (equal names); the flag tells them apart.
    const entries = (listing.body.result.entries as object[]).map((e) => JSON.stringify(e)).sort();
    expect(entries.map((e) => JSON.parse(e) as object)).toEqual([
      { name: 'a%FF', path: 'a%FF', type: 'file', escapedName: true },
      { name: 'a%FF', path: 'a%FF', type: 'file' },
      { name: 'dir%FE', path: 'dir%FE', type: 'directory', escapedName: true },
      { name: 'notes.txt', path: 'dir%FE/notes.txt', type: 'file' },
      { name: 'report%FF.txt', path: 'report%FF.txt', type: 'file', escapedName: true },
    ]);

    const read = await invoke(t, tenant, project, 'read_file', { path: 'report%FF.txt', limit: 1 });
    expect(read.body).toMatchObject({ status: 'ok', result: { path: 'report%FF.txt', content: 'first line\n' } });
    const nested = await invoke(t, tenant, project, 'read_file', { path: 'dir%FE/notes.txt' });
    expect(nested.body).toMatchObject({ status: 'ok', result: { path: 'dir%FE/notes.txt', content: 'needle here\n' } });
    // The literal name is reached as written; its byte twin is listed but never read in its place.
    const literal = await invoke(t, tenant, project, 'read_file', { path: 'a%FF' });
    expect(literal.body).toMatchObject({ status: 'ok', result: { content: 'literal\n' } });
    const search = await invoke(t, tenant, project, 'search_files', { pattern: 'needle' });
    expect(search.body).toMatchObject({ status: 'ok', result: { matches: [{ path: 'dir%FE/notes.txt', line: 1, escapedPath: true }] } });

    // The file counts: the workspace is full, and nothing can be written under the escaped name either.
    const refused = await invoke(t, tenant, project, 'write_file', { path: 'small.txt', content: 'x' });
    expect(refused.body).toMatchObject({ status: 'error', error: { code: 'workspace_quota_exceeded' } });
    const usage = (await t.http.get('/v1/usage').set(tenant.auth).expect(200)).body as { usage: { storageBytes: number } };
    expect(usage.usage.storageBytes).toBeGreaterThan(1.5 * MiB);
    const overwrite = await invoke(t, tenant, project, 'write_file', { path: 'report%FF.txt', content: 'x' });
    expect(overwrite.status).toBe(400);
    expect(overwrite.body).toMatchObject({
      error: { code: 'invalid_path', message: expect.stringContaining('not UTF-8') },
    });

    const deleted = await invoke(t, tenant, project, 'delete_file', { path: 'report%FF.txt' });
    expect(deleted.body).toMatchObject({ status: 'ok', result: { path: 'report%FF.txt', type: 'file' } });
    expect(existsSync(onDisk('report', [0xff], '.txt'))).toBe(false);
    const written = await invoke(t, tenant, project, 'write_file', { path: 'small.txt', content: 'x' });
    expect(written.body).toMatchObject({ status: 'ok', result: { created: true } });

    const dir = await invoke(t, tenant, project, 'delete_file', { path: 'dir%FE', recursive: true });
    expect(dir.body).toMatchObject({ status: 'ok', result: { path: 'dir%FE', type: 'directory' } });
    expect(
      readdirSync(workspace, { encoding: 'buffer' })
        .map((name) => name.toString('hex'))
        .sort(),
    ).toEqual([Buffer.from('a%FF'), Buffer.from([0x61, 0xff]), Buffer.from('small.txt')].map((name) => name.toString('hex')).sort());
  });
});
