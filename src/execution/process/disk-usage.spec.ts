import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_USAGE_DEPTH, measureDiskUsage } from './disk-usage.js';

describe('measureDiskUsage', () => {
  let base: string;
  let root: string;
  const allocated = (path: string) => statSync(path).blocks * 512;

  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'disk-usage-')));
    root = join(base, 'ws');
    mkdirSync(root);
  });
  // rm(1): Node's recursive removal takes seconds over a thousand nested directories.
  afterEach(() => execFileSync('rm', ['-rf', base]));

  it.each([false, true])('adds up the space allocated to every file and directory below the root (blocking: %p)', async (blocking) => {
    mkdirSync(join(root, 'src/deep'), { recursive: true });
    writeFileSync(join(root, 'a.bin'), Buffer.alloc(100_000, 1));
    writeFileSync(join(root, 'src/deep/b.bin'), Buffer.alloc(300_000, 2));
    writeFileSync(join(root, '.hidden'), Buffer.alloc(5000, 3));
    const expected = [root, 'a.bin', 'src', 'src/deep', 'src/deep/b.bin', '.hidden']
      .map((p) => allocated(p === root ? root : join(root, p)))
      .reduce((a, b) => a + b, 0);
    const usage = await measureDiskUsage(root, { blocking });
    expect(usage).toEqual({ bytes: expected, entries: 5, complete: true });
    expect(usage.bytes).toBeGreaterThanOrEqual(405_000);
  });

  it.each([false, true])(
    'counts files and directories whose names are not UTF-8, and what lies below them (blocking: %p)',
    async (blocking) => {
      // What a command can make with printf '\xff': decoded to a string, such a name no longer names the file.
      const dir = Buffer.concat([Buffer.from(`${root}/`), Buffer.from([0xff, 0xfe])]);
      mkdirSync(dir);
      writeFileSync(Buffer.concat([dir, Buffer.from('/'), Buffer.from([0x80, 0x61])]), Buffer.alloc(200_000, 1));
      writeFileSync(Buffer.concat([Buffer.from(`${root}/`), Buffer.from([0xc3, 0x28])]), Buffer.alloc(100_000, 2));
      const usage = await measureDiskUsage(root, { blocking });
      expect(usage.entries).toBe(3);
      expect(usage.bytes).toBeGreaterThanOrEqual(300_000);
    },
  );

  it('counts a file with two links once, and never what a symlink points to', async () => {
    writeFileSync(join(base, 'outside.bin'), Buffer.alloc(1_000_000, 1));
    mkdirSync(join(base, 'outside-dir'));
    writeFileSync(join(base, 'outside-dir/big.bin'), Buffer.alloc(1_000_000, 1));
    symlinkSync(join(base, 'outside.bin'), join(root, 'link-to-file'));
    symlinkSync(join(base, 'outside-dir'), join(root, 'link-to-dir'));
    writeFileSync(join(root, 'one.bin'), Buffer.alloc(200_000, 1));
    linkSync(join(root, 'one.bin'), join(root, 'two.bin'));
    const usage = await measureDiskUsage(root);
    expect(usage.bytes).toBeGreaterThanOrEqual(200_000);
    expect(usage.bytes).toBeLessThan(600_000);
    expect(usage.entries).toBe(4);
  });

  it('says when directories nest deeper than it walks', async () => {
    const deepest = join(root, ...Array<string>(MAX_USAGE_DEPTH).fill('d'));
    mkdirSync(deepest, { recursive: true });
    expect((await measureDiskUsage(root, { blocking: true })).complete).toBe(true);
    mkdirSync(join(deepest, 'd'));
    expect((await measureDiskUsage(root, { blocking: true })).complete).toBe(false);
  });
});
