import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hostOf, normalisedPath } from './policy-request.js';

describe('the paths and hosts a policy sees', () => {
  let workspace: string;

  beforeAll(async () => {
    workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'policy-paths-')));
    await mkdir(path.join(workspace, 'docs'));
    await mkdir(path.join(workspace, 'src'));
    await symlink(path.join(workspace, 'src'), path.join(workspace, 'docs', 'code'));
    await symlink('/etc', path.join(workspace, 'docs', 'etc'));
  });
  afterAll(() => rm(workspace, { recursive: true, force: true }));

  it.each([
    ['docs/a.md', '', 'docs/a.md'],
    ['./docs//a.md', '', 'docs/a.md'],
    ['docs/../x', '', 'x'],
    ['./docs/../x', '', 'x'],
    ['docs/code/a.ts', '', 'src/a.ts'],
    ['docs/etc/passwd', '', '../../../etc/passwd'],
    ['../outside', '', '../outside'],
    ['a.md', 'docs', 'docs/a.md'],
    ['../src/a.ts', 'docs', 'src/a.ts'],
    ['.', '', '.'],
  ])('%s (prefix %j) is judged as %s', (value, prefix, expected) => {
    const judged = normalisedPath(workspace, prefix, value);
    // The symlink to /etc leaves the workspace: how far up depends on where the temporary directory is.
    if (expected.startsWith('../../../etc')) expect(judged).toMatch(/^(\.\.\/)+etc\/passwd$/);
    else expect(judged).toBe(expected);
  });

  it('takes an absolute path as the place it names', () => {
    expect(normalisedPath(workspace, '', path.join(workspace, 'docs', 'b.md'))).toBe('docs/b.md');
    expect(normalisedPath(workspace, '', path.join(workspace, 'docs', '..', 'b.md'))).toBe('b.md');
  });

  it.each([
    ['https://Example.COM/x', 'example.com'],
    ['https://example.com./x', 'example.com'],
    ['https://example.com@evil.test/', 'evil.test'],
    ['https://user:pw@EVIL.test.:8443/', 'evil.test'],
    ['http://[::1]/', '::1'],
    ['https://bücher.example/', 'xn--bcher-kva.example'],
    ['not a url', null],
  ])('the host of %s is %s', (url, host) => {
    expect(hostOf(url)).toBe(host);
  });
});
