import { spawn, type ChildProcess } from 'node:child_process';
import { resolveWorkerEntry } from '../../common/worker-pool/worker-pool.js';
import type { ChildSink, SpawnRequest, StartFailure } from './child-start.js';
import type { FromLauncher, ToLauncher } from './command-launcher.main.js';
import { frame, FrameReader } from './launcher-frames.js';
import { killGroup } from './process-group.js';

// Commands are started by a small process of their own, never by the service's. spawn() blocks its thread
// while the kernel forks the process that asks and the child execs: 15-35 ms for each of a tenant's
// commands when the service forked them on a busy two-core machine (the more memory the service maps, the
// longer), a stall of every other tenant's calls that no share of the event loop can interleave. Forked by
// another thread of the service, the copy still holds the service's memory map: its event loop's p99 delay
// went from 2 to 7-10 ms beside a command started every 50 ms. The launcher (command-launcher.main.ts), a
// Node process of about 40 MB, forks instead, reads the commands' pipes, and sends the service their pid,
// output and exit; the service's threads keep their memory to themselves. Each thread that starts commands
// (the event loop; a pool thread running a `sync` command skill) has a launcher of its own, started with its
// first command, and a command's supervision is unchanged: its pid is a process of this host, killed,
// watched and placed in cgroups as before.

// Why a command did not start.
export class StartFailed extends Error {
  constructor(readonly failure: StartFailure) {
    super(failure.placement ? `could not be placed in its ${failure.placement} (${failure.code})` : failure.code);
  }
}

// A started command as its supervisor (run-supervision.ts) sees it. What the launcher reports before the
// supervisor listens is kept and handed over when it does, so nothing is lost between the start and the
// first listener.
export class StartedChild {
  // Set when its launcher went away while it ran: it was killed, and this says why.
  lost: string | undefined = undefined;
  private sink: ChildSink | undefined;
  private readonly early: Array<(sink: ChildSink) => void> = [];

  constructor(
    readonly pid: number,
    // Stops reading its pipes and closes them: its supervisor is done with it.
    readonly release: () => void,
  ) {}

  listen(sink: ChildSink): void {
    this.sink = sink;
    for (const event of this.early.splice(0)) event(sink);
  }

  // Called with what its launcher reports.
  report(event: (sink: ChildSink) => void): void {
    if (this.sink) event(this.sink);
    else this.early.push(event);
  }
}

export function startChild(request: SpawnRequest): Promise<StartedChild> {
  return launcher.start(request);
}

// The launcher's own heap: it holds a few messages at a time.
const LAUNCHER_NODE_FLAGS = ['--max-old-space-size=64'];

class CommandLauncher {
  private process: ChildProcess | null = null;
  private nextId = 1;
  private readonly starting = new Map<number, { resolve(child: StartedChild): void; reject(err: Error): void }>();
  private readonly running = new Map<number, StartedChild>();

  start(request: SpawnRequest): Promise<StartedChild> {
    const launcher = this.process ?? this.open();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.starting.set(id, { resolve, reject });
      this.hold();
      send(launcher, { kind: 'start', id, request });
    });
  }

  private open(): ChildProcess {
    const entry = resolveWorkerEntry(import.meta.url, 'command-launcher.main.js');
    // Started from nothing: none of the service's settings (its secrets) are in the launcher's environment.
    const launcher = spawn(process.execPath, [...LAUNCHER_NODE_FLAGS, entry], { env: {}, stdio: ['pipe', 'pipe', 'inherit'] });
    const reader = new FrameReader((message) => this.receive(launcher, message as FromLauncher));
    launcher.stdout.on('data', (chunk: Buffer) => reader.push(chunk));
    // EPIPE: it has exited, which 'exit' reports.
    launcher.stdin.on('error', () => {});
    launcher.on('error', (err) => this.lose(launcher, `could not run (${err.message})`));
    launcher.on('exit', (code, signal) => this.lose(launcher, `exited (${signal ?? `code ${code}`})`));
    this.process = launcher;
    return launcher;
  }

  private receive(launcher: ChildProcess, message: FromLauncher): void {
    const { id } = message;
    switch (message.kind) {
      case 'started': {
        const child = new StartedChild(message.pid, () => {
          if (this.process === launcher) send(launcher, { kind: 'release', id });
        });
        this.running.set(id, child);
        this.take(id)?.resolve(child);
        break;
      }
      case 'failed':
        this.take(id)?.reject(new StartFailed(message.failure));
        break;
      case 'output': {
        const chunk = Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength);
        this.running.get(id)?.report((sink) => sink.output(message.fd, chunk));
        break;
      }
      case 'exit':
        this.running.get(id)?.report((sink) => sink.exit(message.code, message.signal));
        break;
      case 'close':
        this.running.get(id)?.report((sink) => sink.close());
        this.running.delete(id);
        break;
    }
    this.hold();
  }

  private take(id: number) {
    const pending = this.starting.get(id);
    this.starting.delete(id);
    return pending;
  }

  // The launcher keeps the service alive only while it has commands starting or running.
  private hold(): void {
    const launcher = this.process;
    if (!launcher) return;
    const busy = this.starting.size + this.running.size > 0;
    for (const handle of [launcher, launcher.stdin as unknown as Handle, launcher.stdout as unknown as Handle]) {
      if (busy) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  // The launcher is gone: the commands it started lost their pipes with it (and bubblewrap dies with its
  // parent). Each is killed (its supervisor then sees it exit and close, and says why from `lost`), and the
  // next command starts a new launcher.
  private lose(launcher: ChildProcess, why: string): void {
    if (this.process !== launcher) return;
    this.process = null;
    launcher.kill('SIGKILL');
    const reason = `the process that started it ${why}`;
    for (const pending of this.starting.values()) pending.reject(new StartFailed({ code: `the command launcher ${why}` }));
    this.starting.clear();
    const running = [...this.running.values()];
    this.running.clear();
    for (const child of running) {
      killGroup(child.pid);
      child.lost = reason;
      child.report((sink) => sink.exit(null, 'SIGKILL'));
      child.report((sink) => sink.close());
    }
  }
}

interface Handle {
  ref?(): void;
  unref?(): void;
}

function send(launcher: ChildProcess, message: ToLauncher): void {
  launcher.stdin!.write(frame(message));
}

// One per thread: each module instance is its thread's.
const launcher = new CommandLauncher();
