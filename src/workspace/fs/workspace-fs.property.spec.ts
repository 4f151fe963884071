import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { AppError } from '../../common/errors/app-error.js';
import { readWorkspaceFile, writeWorkspaceFile, WorkspaceFsError } from './workspace-fs.js';

const SEGMENTS = ['..', '.', '', 'a', 'b', '．．', '..%2f', 'link-out', 'link-in', '\\..', 'ａ'];

let base: string;
let root: string;
let outsideBefore: string;

// The workspace sits inside the "outside" area, which holds entries with the same names ('a', 'b'), so any
// '..' that climbs too far or any link that leaks finds something to read or overwrite.
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-prop-')));
  root = join(base, 'ws');
  for (const dir of [base, root]) {
    await mkdir(join(dir, 'a'), { recursive: true });
    await writeFile(join(dir, 'b'), dir === root ? 'inside' : 'OUTSIDE');
    await writeFile(join(dir, 'a', 'b'), dir === root ? 'inside' : 'OUTSIDE');
  }
  await writeFile(join(root, 'ａ'), 'inside');
  // Both spellings of a link target (absolute and relative); 'a/link-in' leads back up to the root, so
  // 'a/link-in/..' is lexically harmless but really climbs out.
  await symlink(join(base, 'a'), join(root, 'link-out'));
  await symlink('../../a', join(root, 'a', 'link-out'));
  await symlink('a', join(root, 'link-in'));
  await symlink(root, join(root, 'a', 'link-in'));
  outsideBefore = await fingerprintOutside();
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

// Everything under `base` except the workspace: names, sizes, mtimes and contents.
async function fingerprintOutside(dir = base): Promise<string> {
  const parts: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((x, y) => (x.name < y.name ? -1 : 1))) {
    const full = join(dir, entry.name);
    if (full === root) continue;
    const s = await stat(full);
    parts.push(`${full}|${s.mtimeMs}|${s.size}|${entry.isFile() ? await readFile(full, 'utf8') : ''}`);
    if (entry.isDirectory()) parts.push(await fingerprintOutside(full));
  }
  return parts.join('\n');
}

async function expectInside(relative: string): Promise<string> {
  const real = await realpath(join(root, relative));
  expect(real === root || real.startsWith(`${root}/`)).toBe(true);
  return real;
}

function expectRefusedOrOutcome(err: unknown): void {
  if (!(err instanceof AppError) && !(err instanceof WorkspaceFsError)) throw err;
}

// Every segment of the list can be drawn; the ones that move around (links, '..', names that exist) are
// drawn more often so that escape attempts are common rather than rare.
const moving = SEGMENTS.filter((s) => ['..', 'a', 'b', 'link-out', 'link-in'].includes(s));
const segmentArbitrary = fc.oneof(
  { arbitrary: fc.constantFrom(...moving), weight: 3 },
  { arbitrary: fc.constantFrom(...SEGMENTS), weight: 1 },
);
const pathArbitrary = fc
  .tuple(fc.boolean(), fc.array(segmentArbitrary, { minLength: 1, maxLength: 8 }))
  .map(([absolute, segments]) => (absolute ? `${root}/${segments.join('/')}` : segments.join('/')));

describe('workspace confinement (property)', () => {
  it('reads of any mix of traversal, encoded and symlink segments land inside or are refused', async () => {
    await fc.assert(
      fc.asyncProperty(pathArbitrary, async (userPath) => {
        try {
          const result = await readWorkspaceFile(root, userPath, { maxBytes: 1024 });
          await expectInside(result.path);
          expect(result.content).not.toContain('OUTSIDE');
        } catch (err) {
          expectRefusedOrOutcome(err);
          if (err instanceof WorkspaceFsError) expect(err.code).not.toBe('io_error');
        }
        expect(await fingerprintOutside()).toBe(outsideBefore);
      }),
      { numRuns: 400 },
    );
  });

  it('writes to any mix of traversal, encoded and symlink segments land inside or are refused', async () => {
    await fc.assert(
      fc.asyncProperty(pathArbitrary, async (userPath) => {
        try {
          const result = await writeWorkspaceFile(root, userPath, Buffer.from('written'), { createDirs: true });
          const real = await expectInside(result.path);
          expect(await readFile(real, 'utf8')).toBe('written');
        } catch (err) {
          expectRefusedOrOutcome(err);
          if (err instanceof WorkspaceFsError) expect(err.code).not.toBe('io_error');
        }
        expect(await fingerprintOutside()).toBe(outsideBefore);
      }),
      { numRuns: 400 },
    );
  });

  it('refuses the paths that do climb out through the outside link', async () => {
    const escapes = ['link-out/b', 'a/link-out/b', 'link-in/link-out/b', 'a/link-in/../b', 'link-in/link-in/../a/b'];
    for (const userPath of escapes) {
      await expect(readWorkspaceFile(root, userPath, { maxBytes: 100 })).rejects.toMatchObject({
        code: 'path_outside_workspace',
      });
      await expect(writeWorkspaceFile(root, userPath, Buffer.from('x'))).rejects.toMatchObject({
        code: 'path_outside_workspace',
      });
    }
    expect(await fingerprintOutside()).toBe(outsideBefore);
  });
});
