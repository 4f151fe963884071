import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually } from '../support/eventually.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

// A write killed before its rename leaves `.toolgate-<hex>.tmp` in the target's directory; the first time
// the process resolves the workspace, those older than any running write are removed, and nothing else.
describe('temporary files left by interrupted writes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('are swept from the whole workspace when it is first used; fresh ones and look-alikes stay', async () => {
    const tenant = await t.createTenant();
    const project = await t.createProject(tenant);
    const ws = t.workspaceOf(project.id);
    const hourAgo = new Date(Date.now() - 60 * 60 * 1000);
    const plant = async (relative: string, old: boolean) => {
      await mkdir(path.dirname(path.join(ws, relative)), { recursive: true });
      await writeFile(path.join(ws, relative), 'half a file');
      if (old) await utimes(path.join(ws, relative), hourAgo, hourAgo);
    };
    await plant('.toolgate-0123456789abcdef.tmp', true);
    await plant('deep/er/.toolgate-fedcba9876543210.tmp', true);
    await plant('.toolgate-00000000ffffffff.tmp', false); // a write that may still be running
    await plant('.toolgate-notes.tmp', true); // not a name the writer makes
    await plant('keep.txt', true);

    await t.http
      .post(`/v1/projects/${project.id}/tools/list_files/invoke`)
      .set(tenant.auth)
      .send({ arguments: { path: '.' } })
      .expect(200);

    await eventually(() => expect(existsSync(path.join(ws, '.toolgate-0123456789abcdef.tmp'))).toBe(false));
    await eventually(() => expect(existsSync(path.join(ws, 'deep/er/.toolgate-fedcba9876543210.tmp'))).toBe(false));
    for (const kept of ['.toolgate-00000000ffffffff.tmp', '.toolgate-notes.tmp', 'keep.txt', 'deep/er']) {
      expect({ kept, exists: existsSync(path.join(ws, kept)) }).toEqual({ kept, exists: true });
    }
    expect(t.logs.some((line) => /Removed 2 temporary file\(s\) left by interrupted writes/.test(String(line.msg)))).toBe(true);
  });
});
