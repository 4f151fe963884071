import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../common/errors/app-error.js';
import { resolveAllowedExecutable } from './executable-allowlist.js';
import { runProcess } from './process-runner.js';

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected the command to be refused');
};

describe('resolveAllowedExecutable', () => {
  let dir: string;
  beforeAll(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'allowlist-')));
    // An impostor `ls` in the workspace that would leave a marker if it ever ran.
    writeFileSync(join(dir, 'ls'), `#!/bin/sh\ntouch ${join(dir, 'impostor-ran')}\n`);
    chmodSync(join(dir, 'ls'), 0o755);
    mkdirSync(join(dir, 'links'));
    symlinkSync('/usr/bin/ls', join(dir, 'links', 'ls'));
    symlinkSync('/usr/bin/ls', join(dir, 'links', 'renamed'));
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'bin', 'tool'), '#!/bin/sh\necho tool\n');
    chmodSync(join(dir, 'bin', 'tool'), 0o755);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('resolves an allowed bare name through the PATH', () => {
    const resolved = resolveAllowedExecutable('ls', ['ls', 'git']);
    expect(resolved).toMatch(/^\/.*\/ls$/);
    expect(realpathSync(resolved)).toBe(realpathSync('/usr/bin/ls'));
  });

  it('allows a bare name whose PATH resolution is an allowed absolute entry', () => {
    const real = realpathSync('/usr/bin/ls');
    expect(realpathSync(resolveAllowedExecutable('ls', [real]))).toBe(real);
  });

  it('allows an absolute path equal to an allowed absolute entry after realpath', () => {
    expect(resolveAllowedExecutable('/bin/ls', ['/usr/bin/ls'])).toBe('/usr/bin/ls');
  });

  it('allows the absolute path of an allowed bare name when it is the file the PATH gives', () => {
    expect(resolveAllowedExecutable('/usr/bin/ls', ['ls'])).toBe('/usr/bin/ls');
    // A symlink to the real file resolves to the PATH file, never to the caller's link.
    expect(resolveAllowedExecutable(join(dir, 'links', 'ls'), ['ls'])).toBe('/usr/bin/ls');
    // The basename must be the allowed name too.
    expect(refusal(() => resolveAllowedExecutable(join(dir, 'links', 'renamed'), ['ls'])).code).toBe('command_not_allowed');
  });

  it('refuses a workspace file that borrows an allowed basename', () => {
    expect(refusal(() => resolveAllowedExecutable(join(dir, 'ls'), ['ls'])).code).toBe('command_not_allowed');
  });

  it('refuses relative paths such as ./ls', () => {
    const err = refusal(() => resolveAllowedExecutable('./ls', ['ls']));
    expect([err.status, err.code]).toEqual([403, 'command_not_allowed']);
    expect(err.message).toContain('relative paths');
  });

  it('refuses a command not on the list, naming it and the allowed ones', () => {
    const err = refusal(() => resolveAllowedExecutable('rm', ['ls', 'git']));
    expect([err.status, err.code]).toEqual([403, 'command_not_allowed']);
    expect(err.message).toContain('"rm"');
    expect(err.message).toContain('ls, git');
  });

  it('refuses everything when the allow-list is empty', () => {
    expect(refusal(() => resolveAllowedExecutable('ls', [])).message).toContain('allows no commands');
  });

  it('refuses an allowed name that is not found on the PATH', () => {
    expect(refusal(() => resolveAllowedExecutable('no-such-tool-xyz', ['no-such-tool-xyz'])).message).toContain('not found');
  });

  it('refuses empty and NUL-bearing names', () => {
    refusal(() => resolveAllowedExecutable('', ['ls']));
    refusal(() => resolveAllowedExecutable('ls\0x', ['ls']));
  });

  it('looks names up only in the given PATH directories', () => {
    expect(resolveAllowedExecutable('tool', ['tool'], [join(dir, 'bin')])).toBe(join(dir, 'bin', 'tool'));
    refusal(() => resolveAllowedExecutable('tool', ['tool']));
    refusal(() => resolveAllowedExecutable('ls', ['ls'], [dir + '/bin']));
  });

  it('[sec-28] refuses a command that is not on the allow-list before anything is spawned', async () => {
    const marker = join(dir, 'should-not-exist');
    const run = async (argv: string[]) =>
      runProcess({
        argv,
        executable: resolveAllowedExecutable(argv[0], ['ls', 'printf']),
        workspace: dir,
        cwd: dir,
        timeoutMs: 5000,
        maxOutputBytes: 1024,
        sandbox: { kind: 'none' },
      });
    await expect(run(['touch', marker])).rejects.toMatchObject({ status: 403, code: 'command_not_allowed' });
    await expect(run([join(dir, 'ls')])).rejects.toMatchObject({ code: 'command_not_allowed' });
    await expect(run(['./ls'])).rejects.toMatchObject({ code: 'command_not_allowed' });
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(dir, 'impostor-ran'))).toBe(false);
  });

  it('[sec-108] answers a command outside the allow-list the same whether or not such a file exists on the host', () => {
    const answer = (argv0: string) => {
      try {
        resolveAllowedExecutable(argv0, ['ls', 'printf']);
        return 'allowed';
      } catch (error) {
        return (error as Error).message.replace(JSON.stringify(argv0), '<argv0>');
      }
    };
    const existing = [process.execPath, '/bin/sh', '/usr/bin/env', 'env', 'sh'];
    const missing = ['/root/no-such-file', '/usr/bin/no-such-tool', 'no-such-tool', '/etc/no-such-dir/x'];
    const answers = new Set([...existing, ...missing].map(answer));
    expect([...answers]).toEqual(['The command <argv0> is not allowed: it is not on the allow-list. Allowed commands: ls, printf.']);
  });
});
