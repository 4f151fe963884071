import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { processRunHarness } from '../../../test/support/process-runs.js';
import { ToolError } from '../tool-error.js';
import { startChild } from './command-launcher.js';

// Commands are started by the command launcher, a process of its own (command-launcher.ts): never forked by
// the service's threads, and never holding the service's settings.

const runs = processRunHarness();
const { run, pgidOf, groupIsGone } = runs;

const launcherOf = async (): Promise<number> => {
  const result = await run(['sh', '-c', 'echo $PPID']);
  return Number(result.stdout.trim());
};

describe('command launcher', () => {
  it('starts commands from a process of its own, which the service started', async () => {
    const launcher = await launcherOf();
    expect(launcher).not.toBe(process.pid);
    expect(readFileSync(`/proc/${launcher}/cmdline`, 'utf8')).toContain('command-launcher.main.js');
    const stat = readFileSync(`/proc/${launcher}/stat`, 'utf8');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    expect(parent).toBe(process.pid);
    // The same launcher for the next command.
    expect(await launcherOf()).toBe(launcher);
  });

  it("holds none of the service's environment", async () => {
    const launcher = await launcherOf();
    expect(Object.keys(process.env).length).toBeGreaterThan(0);
    expect(readFileSync(`/proc/${launcher}/environ`, 'utf8')).toBe('');
  });

  it('kills the commands of a launcher that dies, says why, and starts the next command with a new one', async () => {
    const launcher = await launcherOf();
    const running = run(['sh', '-c', 'echo $$; exec sleep 30']);
    const outcome = running.then(
      () => null,
      (err: unknown) => err,
    );
    // The command is under way: its sleep is a child of the launcher.
    const deadline = Date.now() + 5_000;
    let sleeper: number | undefined;
    while (sleeper === undefined && Date.now() < deadline) {
      const children = readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim();
      sleeper = children ? Number(children.split(' ')[0]) : undefined;
      if (sleeper === undefined) await delay(20);
    }
    expect(sleeper).toBeDefined();
    pgidOf(String(sleeper));
    process.kill(launcher, 'SIGKILL');

    const err = await outcome;
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ code: 'spawn_failed', message: expect.stringMatching(/the process that started it exited \(SIGKILL\)/) });
    expect(groupIsGone(sleeper!)).toBe(true);

    const next = await launcherOf();
    expect(next).not.toBe(launcher);
    expect((await run(['sh', '-c', 'echo after'])).stdout).toBe('after\n');
  });

  it("gathers a command's output into a few messages, in order, whole", async () => {
    // 4,000 writes of one byte each to stdout, a little apart (each one read on its own), then one line to
    // stderr, then an exit code.
    const script =
      'import os, time\nfor i in range(4000):\n  os.write(1, b"x")\n  time.sleep(0.0002)\nos.write(2, b"done\\n")\nos._exit(3)';
    const child = await startChild({
      file: '/usr/bin/python3',
      args: ['-c', script],
      cwd: runs.workspace(),
      env: {},
      stdio: ['pipe', 'pipe', 'pipe'],
      placeIn: [],
      feeds: [{ fd: 0, content: '' }],
      read: [
        { fd: 1, maxBytes: 1 << 20 },
        { fd: 2, maxBytes: 1 << 20 },
      ],
    });
    pgidOf(String(child.pid));
    const messages: Array<[number, number]> = [];
    const output = { 1: [] as Buffer[], 2: [] as Buffer[] };
    const outcome = await new Promise<{ code: number | null; closed: boolean }>((resolve) => {
      let code: number | null = null;
      child.listen({
        output: (fd, chunk) => {
          messages.push([fd, chunk.length]);
          output[fd as 1 | 2].push(chunk);
        },
        exit: (exitCode) => {
          code = exitCode;
        },
        close: () => resolve({ code, closed: true }),
      });
    });
    expect(outcome).toEqual({ code: 3, closed: true });
    expect(Buffer.concat(output[1]).toString()).toBe('x'.repeat(4_000));
    expect(Buffer.concat(output[2]).toString()).toBe('done\n');
    // The stderr line came after every byte of stdout.
    expect(messages.at(-1)).toEqual([2, 5]);
    expect(messages.length).toBeLessThan(4_000 / 10);
  });
});
