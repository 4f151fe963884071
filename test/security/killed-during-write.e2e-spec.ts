import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const writerModule = fileURLToPath(new URL('../../dist/workspace/fs/workspace-fs.js', import.meta.url));
const SIZE = 4 * 1024 * 1024;

// A child process rewrites one file with the service's write_file code, alternating two contents, and
// is killed with SIGKILL at a random moment. Whatever instant it dies, the file must hold one whole
// version: the write goes to a temporary file that is renamed into place.
describe('[sec-44] a process killed during write_file', () => {
  let workspace: string;

  beforeAll(async () => {
    workspace = await mkdtemp(path.join(os.tmpdir(), 'toolgate-kill-'));
  });
  afterAll(() => rm(workspace, { recursive: true, force: true }));

  it('leaves the old or the new content, never a mix, across repeated kills', async () => {
    const target = path.join(workspace, 'data.bin');
    await writeFile(target, Buffer.alloc(SIZE, 'o'));
    const script = `
      const { writeWorkspaceFile } = await import(${JSON.stringify(writerModule)});
      const versions = [Buffer.alloc(${SIZE}, 'a'), Buffer.alloc(${SIZE}, 'b')];
      process.send('ready');
      for (let i = 0; ; i++) await writeWorkspaceFile(${JSON.stringify(workspace)}, 'data.bin', versions[i % 2], {});
    `;
    const seen = new Set<string>();
    for (let round = 0; round < 12; round++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      await new Promise<void>((resolve) => child.once('message', () => resolve()));
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 150));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));

      const content = await readFile(target);
      expect(content.length).toBe(SIZE);
      const first = String.fromCharCode(content[0]);
      expect(content.every((byte) => byte === content[0])).toBe(true);
      seen.add(first);
    }
    // The kills landed while writes were under way: more than the original content was seen.
    expect([...seen].some((c) => c === 'a' || c === 'b')).toBe(true);
  }, 60_000);
});
