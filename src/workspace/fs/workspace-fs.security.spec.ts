import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  deleteWorkspacePath,
  hashWorkspaceFile,
  listWorkspace,
  readWorkspaceFile,
  resolveWorkspaceDirectory,
  statWorkspacePath,
  writeWorkspaceFile,
} from './workspace-fs.js';
import { expectOutcome, expectRefused, snapshot } from '../../../test/support/workspace-fs-attacks.js';

let base: string;
let root: string;
let outside: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-sec-')));
  root = join(base, 'ws');
  outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'OUTSIDE SECRET\n');
  await writeFile(join(root, 'inside.txt'), 'inside\n');
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const read = (p: string) => readWorkspaceFile(root, p, { maxBytes: 4096 });
const write = (p: string, text = 'pwned', createDirs = false) => writeWorkspaceFile(root, p, Buffer.from(text), { createDirs });

describe('workspace paths: hostile spellings', () => {
  it('[sec-01] refuses ../ traversal for every operation', async () => {
    const before = await snapshot(base);
    await expectRefused(read('../../etc/passwd'), 'path_outside_workspace');
    await expectRefused(read('../outside/secret.txt'), 'path_outside_workspace');
    await expectRefused(read('sub/../../outside/secret.txt'), 'path_outside_workspace');
    await expectRefused(write('../escaped.txt'), 'path_outside_workspace');
    await expectRefused(write('new/../../escaped.txt', 'x', true), 'path_outside_workspace');
    await expectRefused(deleteWorkspacePath(root, '../outside/secret.txt'), 'path_outside_workspace');
    await expectRefused(listWorkspace(root, '..', { limit: 10 }), 'path_outside_workspace');
    await expectRefused(resolveWorkspaceDirectory(root, '../outside'), 'path_outside_workspace');
    expect(await snapshot(base)).toEqual(before);
  });

  it('[sec-01] names the path and the rule in the refusal, without the host path of the target', async () => {
    const err = await expectRefused(read('../outside/secret.txt'), 'path_outside_workspace');
    expect(err.message).toContain("'../outside/secret.txt'");
    expect(err.message).toContain('inside the project workspace');
    expect(err.message).not.toContain(base);
  });

  it('[sec-02] refuses an absolute path outside the workspace and accepts one inside it', async () => {
    await expectRefused(read('/etc/passwd'), 'path_outside_workspace');
    await expectRefused(read(join(outside, 'secret.txt')), 'path_outside_workspace');
    await expectRefused(read(`${root}/../outside/secret.txt`), 'path_outside_workspace');
    await expectRefused(write('/tmp/toolgate-escape.txt'), 'path_outside_workspace');
    expect(existsSync('/tmp/toolgate-escape.txt')).toBe(false);

    expect((await read(join(root, 'inside.txt'))).content).toBe('inside\n');
    expect(await write(`${root}/abs.txt`, 'abs')).toMatchObject({ path: 'abs.txt', created: true });
    expect(await readFile(join(root, 'abs.txt'), 'utf8')).toBe('abs');
    expect(await resolveWorkspaceDirectory(root, root)).toBe(root);
  });

  it('[sec-03] refuses a sibling directory that shares the workspace prefix', async () => {
    for (const [i, sibling] of [`${root}-evil`, `${root}2`, `${root}.bak`].entries()) {
      await mkdir(sibling);
      await writeFile(join(sibling, 'x'), 'SIBLING');
      await expectRefused(read(`${sibling}/x`), 'path_outside_workspace');
      await expectRefused(write(`${sibling}/x`), 'path_outside_workspace');
      await expectRefused(write(`${sibling}/new`), 'path_outside_workspace');
      await expectRefused(deleteWorkspacePath(root, `${sibling}/x`), 'path_outside_workspace');
      await symlink(`${sibling}/x`, join(root, `to-sibling-${i}`));
      expect(await readFile(join(sibling, 'x'), 'utf8')).toBe('SIBLING');
      expect(existsSync(join(sibling, 'new'))).toBe(false);
    }
    for (const name of await readdir(root)) {
      if (name.startsWith('to-')) await expectRefused(read(name), 'path_outside_workspace');
    }
  });

  it('[sec-04] refuses to read through a symlink to a file outside', async () => {
    await symlink(join(outside, 'secret.txt'), join(root, 'abs-link'));
    await symlink('../outside/secret.txt', join(root, 'rel-link'));
    await symlink('abs-link', join(root, 'chained-link'));
    for (const name of ['abs-link', 'rel-link', 'chained-link']) {
      await expectRefused(read(name), 'path_outside_workspace');
      await expectRefused(hashWorkspaceFile(root, name), 'path_outside_workspace');
      await expectRefused(statWorkspacePath(root, name), 'path_outside_workspace');
    }
    await symlink('inside.txt', join(root, 'good-link'));
    expect(await read('good-link')).toMatchObject({ path: 'inside.txt', content: 'inside\n' });
  });

  it('[sec-05] refuses to write through a symlinked directory that points outside; nothing is created', async () => {
    await symlink(outside, join(root, 'link'));
    await symlink('../outside', join(root, 'rel-link'));
    const before = await snapshot(outside);
    await expectRefused(write('link/new.txt'), 'path_outside_workspace');
    await expectRefused(write('link/deep/new.txt', 'x', true), 'path_outside_workspace');
    await expectRefused(write('rel-link/new.txt'), 'path_outside_workspace');
    await expectRefused(write('link/secret.txt'), 'path_outside_workspace');
    await expectRefused(deleteWorkspacePath(root, 'link/secret.txt'), 'path_outside_workspace');
    await expectRefused(listWorkspace(root, 'link', { limit: 10 }), 'path_outside_workspace');
    await expectRefused(resolveWorkspaceDirectory(root, 'link'), 'path_outside_workspace');
    expect(await snapshot(outside)).toEqual(before);
  });

  it('[sec-06] refuses to write through a dangling symlink; nothing is created outside or inside', async () => {
    await symlink(join(outside, 'created.txt'), join(root, 'dangling-abs'));
    await symlink('../outside/created.txt', join(root, 'dangling-rel'));
    await symlink(join(base, 'nowhere', 'x.txt'), join(root, 'dangling-deep'));
    await symlink('missing-inside.txt', join(root, 'dangling-inside'));
    await expectRefused(write('dangling-abs'), 'path_outside_workspace');
    await expectRefused(write('dangling-rel'), 'path_outside_workspace');
    await expectRefused(write('dangling-deep', 'x', true), 'path_outside_workspace');
    await expectRefused(write('dangling-inside'), 'dangling_symlink');
    expect(existsSync(join(outside, 'created.txt'))).toBe(false);
    expect(existsSync(join(base, 'nowhere'))).toBe(false);
    expect(existsSync(join(root, 'missing-inside.txt'))).toBe(false);
  });

  it('[sec-09] refuses a NUL byte in a path for every operation', async () => {
    for (const p of ['a\0b', 'inside.txt\0.png', '\0']) {
      await expectRefused(read(p), 'invalid_path', 400);
      await expectRefused(write(p), 'invalid_path', 400);
      await expectRefused(deleteWorkspacePath(root, p), 'invalid_path', 400);
      await expectRefused(listWorkspace(root, p, { limit: 5 }), 'invalid_path', 400);
      await expectRefused(resolveWorkspaceDirectory(root, p), 'invalid_path', 400);
    }
    const err = await expectRefused(read('a\0b'), 'invalid_path', 400);
    expect(err.message).toContain('NUL byte');
  });

  it('[sec-10] treats backslash and drive-letter paths as literal names on POSIX', async () => {
    const before = await snapshot(base);
    for (const name of ['..\\..\\x', 'C:\\Windows\\x', '..\\outside\\secret.txt']) {
      expect(await write(name, name)).toMatchObject({ path: name, created: true });
      expect(await readFile(join(root, name), 'utf8')).toBe(name);
      expect((await read(name)).content).toBe(name);
    }
    const added = Object.keys(await snapshot(base)).filter((p) => !(p in before));
    expect(added.every((p) => p.startsWith(`${root}/`))).toBe(true);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
  });

  it('[sec-11] never decodes percent-encoded traversal', async () => {
    await expectOutcome(read('..%2foutside%2fsecret.txt'), 'not_found');
    await expectOutcome(read('%2e%2e/outside/secret.txt'), 'not_found');
    await expectOutcome(read('%252e%252e/%252e%252e/etc/passwd'), 'not_found');
    expect(await write('%2e%2e/x.txt', 'x', true)).toMatchObject({ path: '%2e%2e/x.txt' });
    expect(await write('..%2f..%2fx', 'x')).toMatchObject({ path: '..%2f..%2fx' });
    expect(existsSync(join(root, '%2e%2e', 'x.txt'))).toBe(true);
    expect(existsSync(join(base, 'x.txt'))).toBe(false);
  });

  it('[sec-12] treats fullwidth dots and slashes, and NFD versus NFC spellings, as literal names', async () => {
    const fullwidth = '．．／．．／x';
    expect(await write(fullwidth, 'fw')).toMatchObject({ path: fullwidth });
    expect(await write('．．/y.txt', 'fw', true)).toMatchObject({ path: '．．/y.txt' });
    expect(existsSync(join(root, '．．', 'y.txt'))).toBe(true);

    const nfc = 'caf\u00e9.txt';
    const nfd = 'cafe\u0301.txt';
    await write(nfc, 'nfc');
    await write(nfd, 'nfd');
    expect((await read(nfc)).content).toBe('nfc');
    expect((await read(nfd)).content).toBe('nfd');
    await expectRefused(read('\uff0e\uff0e/../../outside/secret.txt'), 'path_outside_workspace');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
  });

  it('[sec-13] refuses an 8 KiB path and 2,000 segments with a 4xx, not a crash', async () => {
    const long = 'a'.repeat(8 * 1024);
    const many = Array.from({ length: 2000 }, () => 'a').join('/');
    const longSegment = 'b'.repeat(300);
    for (const p of [long, many, `dir/${longSegment}`]) {
      await expectRefused(read(p), 'invalid_path', 400);
      await expectRefused(write(p), 'invalid_path', 400);
      await expectRefused(deleteWorkspacePath(root, p), 'invalid_path', 400);
      await expectRefused(listWorkspace(root, p, { limit: 5 }), 'invalid_path', 400);
    }
    expect((await expectRefused(read(long), 'invalid_path', 400)).message).toContain('4096');
    expect((await expectRefused(read(many), 'invalid_path', 400)).message).toContain('2000 segments');
    expect((await expectRefused(read(`dir/${longSegment}`), 'invalid_path', 400)).message).toContain('255 bytes');
  });

  it('[sec-15] refuses to delete the workspace root however it is spelled', async () => {
    await mkdir(join(root, 'a'));
    await symlink('.', join(root, 'self'));
    for (const p of ['.', './', 'a/..', root, `${root}/`, `${root}/.`, 'self/.', 'a/../.']) {
      await expectRefused(deleteWorkspacePath(root, p, { recursive: true }), 'workspace_root');
    }
    await expectRefused(deleteWorkspacePath(root, '', { recursive: true }), 'invalid_path', 400);
    await expectRefused(deleteWorkspacePath(root, '/', { recursive: true }), 'path_outside_workspace');
    expect(existsSync(join(root, 'inside.txt'))).toBe(true);
    // The link itself is an ordinary entry: deleting it removes the link only.
    expect(await deleteWorkspacePath(root, 'self')).toEqual({ path: 'self', type: 'symlink' });
    expect(existsSync(join(root, 'inside.txt'))).toBe(true);
  });
});
