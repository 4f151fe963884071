import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { parseChildren, parseUnsharedMemory, parseWriteBytes, sampleProcessTree, signalTree } from './process-tree.js';

describe('parsing /proc', () => {
  it('reads write_bytes from an io file', () => {
    const io = 'rchar: 6976\nwchar: 10487455\nsyscr: 10\nsyscw: 39\nread_bytes: 20480\nwrite_bytes: 10485760\ncancelled_write_bytes: 0\n';
    expect(parseWriteBytes(io)).toBe(10485760);
    expect(parseWriteBytes('')).toBe(0);
  });

  it('counts anonymous and shared-memory pages of a status file, not the file-backed ones', () => {
    const status = 'Name:\tpython3\nVmRSS:\t   13508 kB\nRssAnon:\t    6860 kB\nRssFile:\t    6648 kB\nRssShmem:\t       4 kB\n';
    expect(parseUnsharedMemory(status)).toBe((6860 + 4) * 1024);
  });

  it('reads the pids of a children file', () => {
    expect(parseChildren('15226 15230 \n')).toEqual([15226, 15230]);
    expect(parseChildren('')).toEqual([]);
  });
});

const python = existsSync('/usr/bin/python3') ? it : it.skip;

describe('sampleProcessTree', () => {
  let dir: string;
  beforeAll(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'process-tree-')));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  python('sums what a process and its children wrote to files and hold in memory, the exited ones included', async () => {
    // The parent waits for a child that wrote 3 MiB, then for a second child to write 1 MiB (it stays), then
    // writes 2 MiB itself and holds 32 MiB.
    const script = [
      'import os, sys, time',
      'def write(name, n):',
      '    with open(name, "wb") as f: f.write(b"x" * n)',
      'pid = os.fork()',
      'if pid == 0:',
      '    write("child-a", 3 << 20); os._exit(0)',
      'os.waitpid(pid, 0)',
      'r, w = os.pipe()',
      'if os.fork() == 0:',
      '    write("child-b", 1 << 20); os.write(w, b"."); time.sleep(30); os._exit(0)',
      'os.read(r, 1)',
      'write("parent", 2 << 20)',
      'held = bytearray(32 << 20)',
      'print("ready", flush=True)',
      'time.sleep(30)',
    ].join('\n');
    const child = spawn('/usr/bin/python3', ['-c', script], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    try {
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      const sample = sampleProcessTree(child.pid!, { memory: true });
      expect(sample.processes).toBe(2);
      expect(sample.writtenBytes).toBeGreaterThanOrEqual(6 << 20);
      expect(sample.writtenBytes).toBeLessThan(7 << 20);
      expect(sample.memoryBytes).toBeGreaterThanOrEqual(32 << 20);
      const withoutMemory = sampleProcessTree(child.pid!, { memory: false });
      expect(withoutMemory.memoryBytes).toBe(0);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
  });

  it('answers an empty sample for a process that is gone', () => {
    expect(sampleProcessTree(2 ** 22 + 12345, { memory: true })).toEqual({ processes: 0, writtenBytes: 0, memoryBytes: 0 });
  });
});

describe('signalTree', () => {
  // The state letter of /proc/<pid>/stat: T stopped, S sleeping.
  const state = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0];
  };
  const treeOf = (root: number): number[] => {
    const children = readFileSync(`/proc/${root}/task/${root}/children`, 'utf8');
    return [root, ...parseChildren(children).flatMap(treeOf)];
  };

  it('stops every process of a tree, grandchildren included, and lets them go on', async () => {
    // A group of its own: taken down whole at the end, whichever of its processes are still there.
    const child = spawn('sh', ['-c', 'sh -c "sleep 30 & sleep 30; wait" & sleep 30; wait'], { stdio: 'ignore', detached: true });
    let pids: number[] = [];
    try {
      for (let i = 0; i < 100 && pids.length < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        pids = treeOf(child.pid!);
      }
      expect(pids).toHaveLength(5);
      // A signal takes effect when its process is next scheduled: on a busy machine, some time after it is sent.
      const states = async (done: (letters: string[]) => boolean) => {
        let letters = pids.map(state);
        for (let i = 0; i < 100 && !done(letters); i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          letters = pids.map(state);
        }
        return letters;
      };
      expect(signalTree(child.pid!, 'SIGSTOP')).toBe(5);
      expect(await states((letters) => letters.every((s) => s === 'T'))).toEqual(['T', 'T', 'T', 'T', 'T']);
      expect(signalTree(child.pid!, 'SIGCONT')).toBe(5);
      expect((await states((letters) => !letters.includes('T'))).filter((s) => s === 'T')).toEqual([]);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
  });
});
