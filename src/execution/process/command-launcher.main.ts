import { closeInheritedDescriptors } from './inherited-descriptors.js';
import { killGroup } from './process-group.js';
import { startHere, type SpawnRequest, type StartFailure } from './child-start.js';
import { frame, FrameReader } from './launcher-frames.js';

// The command launcher's process (command-launcher.ts starts it): starts the commands the service asks for
// on its stdin, reads their pipes, and reports what each does, in order and by id, on its stdout. When the
// service goes (its stdin ends), every command it started is killed and it exits.

export type ToLauncher = { kind: 'start'; id: number; request: SpawnRequest } | { kind: 'release'; id: number };

export type FromLauncher =
  | { kind: 'started'; id: number; pid: number }
  | { kind: 'failed'; id: number; failure: StartFailure }
  | { kind: 'output'; id: number; fd: number; chunk: Uint8Array }
  | { kind: 'exit'; id: number; code: number | null; signal: string | null }
  | { kind: 'close'; id: number };

// Nothing the service inherited reaches a command through this process: only its stdin and stdout (which a
// command's own pipes replace), stderr, and Node's own descriptors (close-on-exec) stay open.
closeInheritedDescriptors();

const running = new Map<number, { pid?: number; release(): void }>();
const send = (message: FromLauncher) => process.stdout.write(frame(message));

const reader = new FrameReader((message) => {
  const request = message as ToLauncher;
  if (request.kind === 'release') {
    running.get(request.id)?.release();
    return;
  }
  const { id } = request;
  // A start that fails may say so at once or once spawn() reports its error.
  let ended = false;
  const entry: { pid?: number; release(): void } = { release() {} };
  const end = (last: FromLauncher) => {
    ended = true;
    running.delete(id);
    send(last);
  };
  const handle = startHere(request.request, {
    started: (pid) => {
      entry.pid = pid;
      send({ kind: 'started', id, pid });
    },
    failed: (failure) => end({ kind: 'failed', id, failure }),
    output: (fd, chunk) => send({ kind: 'output', id, fd, chunk }),
    exit: (code, signal) => send({ kind: 'exit', id, code, signal }),
    close: () => end({ kind: 'close', id }),
  });
  entry.release = () => handle.release();
  if (!ended) running.set(id, entry);
});

process.stdin.on('data', (chunk: Buffer) => reader.push(chunk));
process.stdin.on('end', () => {
  for (const { pid } of running.values()) if (pid !== undefined) killGroup(pid);
  process.exit(0);
});
// The service went away mid-write: the same as its end.
process.stdout.on('error', () => process.stdin.emit('end'));
