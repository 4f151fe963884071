import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync, readlinkSync } from 'node:fs';
import { attachToCpuGroup } from '../../common/cpu-shares/tenant-cpu-groups.js';
import { attachToCallCgroup } from './sandbox/call-cgroup.js';

// One command's process started, placed, fed and read: what the runner asks of the command launcher
// (command-launcher.ts), as plain data, and how the launcher does it and reports back.

export interface SpawnRequest {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  // The uid and gid it runs as (root's children otherwise).
  runAs?: { uid: number; gid: number };
  // What each of its descriptors is: a pipe, or a directory opened for it (O_PATH) once the kernel is seen to
  // find it at that very path, no symlink in its way; else it does not start (workspace_unavailable). It
  // always starts a process group of its own (detached), so one kill reaches everything it starts.
  stdio: Array<'pipe' | { directory: string }>;
  // Cgroups it is moved into before anything is fed to it (a sandbox forks nothing before it has read its
  // arguments, so everything it starts is born there). Failing one, it is killed and never runs.
  placeIn: Placement[];
  // Written to its pipes (then closed) once it is placed: its stdin, a sandbox's arguments and files.
  feeds: Array<{ fd: number; content: string | Uint8Array }>;
  // Its pipes read, each until it closes or has given more than `maxBytes` (then it is no longer read, so
  // a command writing without end is held by the pipe while its supervisor kills it for its output).
  read: Array<{ fd: number; maxBytes: number }>;
}

export interface Placement {
  // Named in the error when the move fails.
  what: string;
  kind: 'memory' | 'cpu';
  dir: string;
}

// A grandchild that escaped the group may hold the pipes open; they are read this long after the exit.
const DRAIN_MS = 100;

// Why a process did not start: the errno of spawn(), the cgroup it could not be moved into, or the directory
// that was no longer the one accepted.
export type StartFailure = { code: string; placement?: string; directory?: string };

// What a started process reports, in the order it happens: its pipes' output, its exit, then the close of
// its pipes.
export interface ChildSink {
  output(fd: number, chunk: Buffer): void;
  exit(code: number | null, signal: string | null): void;
  close(): void;
}

// Starts the process, and reports through `report` once it started (its pid) or did not (why), then what it
// does (ChildSink). Blocks the calling thread while the kernel forks this process and the child execs: the
// command launcher's small process calls it, never the service's (see command-launcher.ts).
export function startHere(
  request: SpawnRequest,
  report: ChildSink & { started(pid: number): void; failed(failure: StartFailure): void },
): { release(): void } {
  const opened: number[] = [];
  let child: ChildProcess;
  try {
    const stdio = request.stdio.map((entry) => {
      if (entry === 'pipe') return entry;
      const fd = openCheckedDirectory(entry.directory);
      opened.push(fd);
      return fd;
    });
    child = spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      detached: true,
      shell: false,
      stdio,
      // libuv also clears the supplementary groups when it switches uid.
      ...(request.runAs && { uid: request.runAs.uid, gid: request.runAs.gid }),
    });
  } catch (err) {
    report.failed(err instanceof DirectoryMoved ? { code: 'workspace_unavailable', directory: err.dir } : { code: errorCode(err) });
    return { release() {} };
  } finally {
    // The child holds its own copies from here on (or never started).
    for (const fd of opened) closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) {
    child.once('error', (err) => report.failed({ code: errorCode(err) }));
    return { release() {} };
  }
  for (const placement of request.placeIn) {
    try {
      if (placement.kind === 'memory') attachToCallCgroup(placement.dir, pid);
      else attachToCpuGroup(placement.dir, pid);
    } catch (err) {
      child.kill('SIGKILL');
      for (const pipe of child.stdio) pipe?.destroy();
      report.failed({ code: errorCode(err), placement: placement.what });
      return { release() {} };
    }
  }
  report.started(pid);
  child.on('error', () => {}); // after a successful spawn only kill() reports here, and it is not used
  for (const { fd, content } of request.feeds) {
    // EPIPE: it exited or closed the pipe without reading it all, which is its right.
    const pipe = child.stdio[fd] as NodeJS.WritableStream & { on(event: 'error', fn: () => void): void };
    pipe.on('error', () => {});
    pipe.end(content);
  }
  for (const { fd, maxBytes } of request.read) {
    const pipe = child.stdio[fd] as NodeJS.ReadableStream;
    let given = 0;
    pipe.on('data', (chunk: Buffer) => {
      given += chunk.length;
      report.output(fd, chunk);
      if (given > maxBytes) pipe.pause();
    });
  }
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    for (const pipe of child.stdio) pipe?.destroy();
    report.close();
  };
  child.on('exit', (code, signal) => {
    report.exit(code, signal);
    // What the command wrote before it exited (its last output, bubblewrap's exit status) is in the pipes,
    // but may not have been read: one SIGCHLD reaps every child that has exited, some after the loop last
    // polled. The drain's clock starts once this thread's loop has polled again, so a stall of it (a busy
    // machine) cannot end the wait before that is read and turn a command that ran into "the sandbox could
    // not be set up". A grandchild that escaped the group may hold the pipes open: they close after it.
    afterNextPoll(() => setTimeout(close, DRAIN_MS));
  });
  child.on('close', close);
  return {
    release() {
      for (const pipe of child.stdio) pipe?.destroy();
    },
  };
}

// setImmediate from the poll phase runs in the same turn's check phase; one more is queued for the next
// turn's, after its poll phase has read whatever the pipes held.
function afterNextPoll(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}

class DirectoryMoved extends Error {
  constructor(readonly dir: string) {
    super(`${dir} is no longer the directory that was accepted`);
  }
}

// Linux value (Node does not export it): a descriptor that names the directory without opening it.
const O_PATH = 0o10000000;

// Opens the directory and checks, on the descriptor, that the kernel finds it at the path given (no symlink
// has been put in its way since it was accepted).
function openCheckedDirectory(dir: string): number {
  let fd: number;
  try {
    fd = openSync(dir, O_PATH | fsConstants.O_DIRECTORY);
  } catch {
    throw new DirectoryMoved(dir);
  }
  let real: string | undefined;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // answered below
  }
  if (real !== dir) {
    closeSync(fd);
    throw new DirectoryMoved(dir);
  }
  return fd;
}

function errorCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? 'unknown error';
}
