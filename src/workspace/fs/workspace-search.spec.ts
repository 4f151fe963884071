import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../common/errors/app-error.js';
import { searchWorkspace, type SearchWorkspaceOptions } from './workspace-search.js';

let base: string;
let root: string;
const opts = (o: Partial<SearchWorkspaceOptions> & { pattern: string }): SearchWorkspaceOptions => ({
  maxResults: 100,
  contextLines: 0,
  maxFileBytes: 1024,
  ...o,
});

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-search-')));
  root = join(base, 'ws');
  await mkdir(join(root, 'src/deep'), { recursive: true });
  await mkdir(join(root, '.git'));
  await writeFile(join(root, 'src/a.ts'), 'import x\nconst needle = 1;\n// Needle again\nend\n');
  await writeFile(join(root, 'src/deep/b.js'), 'needle();\r\n');
  await writeFile(join(root, '.git/config'), 'needle\n');
  await writeFile(join(root, 'big.txt'), `needle\n${'x'.repeat(2000)}`);
  await writeFile(join(root, 'bin.dat'), Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0, 1]));
  await writeFile(join(base, 'secret.txt'), 'needle outside\n');
  await symlink(join(base, 'secret.txt'), join(root, 'leak.txt'));
  await symlink(base, join(root, 'outdir'));
  execFileSync('mkfifo', [join(root, 'pipe')]);
});

afterAll(() => rm(base, { recursive: true, force: true }));

describe('searchWorkspace', () => {
  it('finds matching lines by path and line number, skipping .git, symlinks, binary and oversized files', async () => {
    const result = await searchWorkspace(root, '', opts({ pattern: 'needle' }));
    expect(result.matches).toEqual([
      { path: 'src/a.ts', line: 2, text: 'const needle = 1;' },
      { path: 'src/deep/b.js', line: 1, text: 'needle();' },
    ]);
    expect(result).toMatchObject({ truncated: false, filesSearched: 2, filesSkipped: 2 });
  });

  it('matches case-insensitively, with a regular expression and context lines', async () => {
    const result = await searchWorkspace(root, 'src', opts({ pattern: 'n[e]+dle', caseSensitive: false, contextLines: 1, glob: '*.ts' }));
    expect(result.matches).toEqual([
      { path: 'src/a.ts', line: 2, text: 'const needle = 1;', before: ['import x'], after: ['// Needle again'] },
      { path: 'src/a.ts', line: 3, text: '// Needle again', before: ['const needle = 1;'], after: ['end'] },
    ]);
  });

  it('stops at maxResults and says how to narrow the search', async () => {
    const result = await searchWorkspace(root, '', opts({ pattern: 'e', maxResults: 2 }));
    expect(result.matches).toHaveLength(2);
    expect(result.truncated).toBe(true);
    expect(result.hint).toMatch(/glob/);
  });

  // A match on the first line of a.txt; then 256 KiB of lines that cost RE2 seconds to scan with a costly pattern.
  async function costlyTree(): Promise<string> {
    const dir = join(base, 'costly');
    await mkdir(dir, { recursive: true });
    const alphabet = 'abcdefghij ';
    let noise = '';
    for (let i = 1; i <= 256 * 1024; i++) noise += i % 1000 === 0 ? '\n' : alphabet[(i * 7919) % alphabet.length];
    await writeFile(join(dir, 'a.txt'), `${'a'.repeat(60)}\n${noise}\n`);
    await writeFile(join(dir, 'b.txt'), `${noise}\n`);
    return dir;
  }

  it('stops a costly pattern at its time budget and answers what it found, saying why and what to do', async () => {
    const dir = await costlyTree();
    const started = Date.now();
    const result = await searchWorkspace(dir, '', opts({ pattern: '[a-j ]{1,400}[ab]{40}', maxFileBytes: 1024 * 1024, budgetMs: 1000 }));
    const took = Date.now() - started;
    expect(took).toBeLessThan(3000);
    expect(result.matches).toEqual([{ path: 'a.txt', line: 1, text: 'a'.repeat(60) }]);
    expect(result).toMatchObject({ truncated: true, stoppedBy: 'budget' });
    expect(result.hint).toMatch(/stopped after 1 s.*narrow the pattern/i);
  }, 20_000);

  it('leaves a cheap pattern over the same text alone', async () => {
    const result = await searchWorkspace(await costlyTree(), '', opts({ pattern: 'zzz|a{60}', maxFileBytes: 1024 * 1024, budgetMs: 1000 }));
    expect(result).toMatchObject({ truncated: false, filesSearched: 2 });
    expect(result.stoppedBy).toBeUndefined();
  });

  it('searches one file when path names a file', async () => {
    expect((await searchWorkspace(root, 'src/deep/b.js', opts({ pattern: '^needle' }))).matches).toEqual([
      { path: 'src/deep/b.js', line: 1, text: 'needle();' },
    ]);
  });

  it('refuses a pattern RE2 cannot run, with the reason and what to do', async () => {
    const err: unknown = await searchWorkspace(root, '', opts({ pattern: '(a)\\1' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_pattern', message: expect.stringMatching(/backreferences/) });
  });

  it('refuses paths outside the workspace and special files', async () => {
    await expect(searchWorkspace(root, 'outdir', opts({ pattern: 'needle' }))).rejects.toMatchObject({ code: 'path_outside_workspace' });
    await expect(searchWorkspace(root, 'leak.txt', opts({ pattern: 'needle' }))).rejects.toMatchObject({ code: 'path_outside_workspace' });
    await expect(searchWorkspace(root, '../', opts({ pattern: 'needle' }))).rejects.toMatchObject({ code: 'path_outside_workspace' });
    await expect(searchWorkspace(root, 'pipe', opts({ pattern: 'needle' }))).rejects.toMatchObject({ code: 'special_file' });
  });
});
