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

// Messages go out in order, the ones that end a start or a command at once; a command's output is gathered
// for up to OUTPUT_GATHER_MS per stream into one message. A command writing a byte at a time is read a byte
// at a time here (this process is seldom busy): sent so, 130,000 messages a command, which the service's
// event loop had to take one by one. Its supervisor needs the output only at the end, or to see it pass its
// cap (each stream stops being read one chunk past it), so a few milliseconds late costs nothing.
const OUTPUT_GATHER_MS = 10;
let outbox: Array<{ message: FromLauncher; chunks?: Buffer[] }> = [];
// The output entries in the outbox that more output of their command's stream may join: not once the command's
// exit or close is queued after them.
const gathering = new Map<number, Map<number, Buffer[]>>();
let flushSoon: NodeJS.Immediate | undefined;
let flushLater: NodeJS.Timeout | undefined;
const send = (message: FromLauncher) => {
  if (message.kind === 'output') {
    const streams = gathering.get(message.id) ?? new Map<number, Buffer[]>();
    gathering.set(message.id, streams);
    const chunks = streams.get(message.fd);
    if (chunks) chunks.push(message.chunk as Buffer);
    else {
      const entry = { message, chunks: [message.chunk as Buffer] };
      outbox.push(entry);
      streams.set(message.fd, entry.chunks);
    }
    flushLater ??= setTimeout(flush, OUTPUT_GATHER_MS);
    return;
  }
  if (message.kind === 'exit' || message.kind === 'close') gathering.delete(message.id);
  outbox.push({ message });
  flushSoon ??= setImmediate(flush);
};
function flush(): void {
  clearImmediate(flushSoon);
  clearTimeout(flushLater);
  flushSoon = flushLater = undefined;
  const entries = outbox;
  outbox = [];
  gathering.clear();
  const frames = entries.map(({ message, chunks }) =>
    frame(chunks && message.kind === 'output' ? { ...message, chunk: Buffer.concat(chunks) } : message),
  );
  process.stdout.write(Buffer.concat(frames));
}

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
