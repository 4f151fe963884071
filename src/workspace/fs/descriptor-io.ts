import {
  close,
  closeSync,
  fstat,
  fstatSync,
  lchown,
  lchownSync,
  lstat,
  lstatSync,
  mkdir,
  mkdirSync,
  open,
  openSync,
  read,
  readdir,
  readdirSync,
  type Dirent,
  readlink,
  readlinkSync,
  readSync,
  type Stats,
} from 'node:fs';

// The system calls the confined file system makes, on plain descriptor numbers. Two implementations:
//
// - `asyncIo` (the event loop): Node's callback API. A FileHandle costs an object, a finalizer and a
//   promise chain per call; plain descriptors with callbacks measured at about half the CPU per confined
//   read.
// - `blockingIo` (worker threads only): the same calls made synchronously. A walk of thousands of entries
//   would otherwise queue each call behind the whole process's I/O in libuv's thread pool.
//
// Code written against this interface `await`s every result; on a plain value that costs a microtask, not
// a trip to the thread pool, so one implementation of each algorithm serves both.
// A path is bytes where it holds a name that is not UTF-8 (workspace-name.codec.ts).
export type FsPath = string | Buffer;

export interface DescriptorIo {
  open(path: FsPath, flags: number, mode?: number): Promise<number> | number;
  fstat(fd: number): Promise<Stats> | Stats;
  lstat(path: FsPath): Promise<Stats> | Stats;
  readlink(path: FsPath): Promise<string> | string;
  readlinkBytes(path: FsPath): Promise<Buffer> | Buffer;
  readdir(path: FsPath): Promise<string[]> | string[];
  readdirBytes(path: FsPath): Promise<Buffer[]> | Buffer[];
  // Names with their types from the directory read (d_type); Node lstats an entry whose type the file
  // system does not report, on the same confined path.
  readdirTypes(path: FsPath): Promise<Dirent[]> | Dirent[];
  readdirTypesBytes(path: FsPath): Promise<Dirent<Buffer>[]> | Dirent<Buffer>[];
  read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> | number;
  mkdir(path: FsPath, mode: number): Promise<void> | void;
  // Never follows a final symlink: a name swapped for one changes the link's owner, not its target's.
  lchown(path: FsPath, uid: number, gid: number): Promise<void> | void;
  close(fd: number): Promise<void> | void;
}

type Callback<T> = (err: NodeJS.ErrnoException | null, value: T) => void;

function call<T>(start: (done: Callback<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => start((err, value) => (err ? reject(err) : resolve(value))));
}

export const asyncIo: DescriptorIo = {
  open: (path, flags, mode) => call<number>((done) => open(path, flags, mode ?? 0o666, done)),
  fstat: (fd) => call<Stats>((done) => fstat(fd, done)),
  lstat: (path) => call<Stats>((done) => lstat(path, done)),
  readlink: (path) => call<string>((done) => readlink(path, done)),
  readlinkBytes: (path) => call<Buffer>((done) => readlink(path, { encoding: 'buffer' }, done)),
  readdir: (path) => call<string[]>((done) => readdir(path, done)),
  readdirBytes: (path) => call<Buffer[]>((done) => readdir(path, { encoding: 'buffer' }, done)),
  readdirTypes: (path) => call<Dirent[]>((done) => readdir(path, { withFileTypes: true }, done)),
  readdirTypesBytes: (path) => call<Dirent<Buffer>[]>((done) => readdir(path, { withFileTypes: true, encoding: 'buffer' }, done)),
  read: (fd, buffer, offset, length, position) => call<number>((done) => read(fd, buffer, offset, length, position, done)),
  mkdir: (path, mode) => call<void>((done) => mkdir(path, mode, (err) => done(err, undefined))),
  lchown: (path, uid, gid) => call<void>((done) => lchown(path, uid, gid, (err) => done(err, undefined))),
  close: (fd) => call<void>((done) => close(fd, (err) => done(err ?? null, undefined))),
};

export const blockingIo: DescriptorIo = {
  open: (path, flags, mode) => openSync(path, flags, mode ?? 0o666),
  fstat: (fd) => fstatSync(fd),
  lstat: (path) => lstatSync(path),
  readlink: (path) => readlinkSync(path),
  readlinkBytes: (path) => readlinkSync(path, { encoding: 'buffer' }),
  readdir: (path) => readdirSync(path),
  readdirBytes: (path) => readdirSync(path, { encoding: 'buffer' }),
  readdirTypes: (path) => readdirSync(path, { withFileTypes: true }),
  readdirTypesBytes: (path) => readdirSync(path, { withFileTypes: true, encoding: 'buffer' }),
  read: (fd, buffer, offset, length, position) => readSync(fd, buffer, offset, length, position),
  mkdir: (path, mode) => {
    mkdirSync(path, mode);
  },
  lchown: (path, uid, gid) => lchownSync(path, uid, gid),
  close: (fd) => closeSync(fd),
};

// An O_PATH descriptor has no open file behind it: closing one never flushes, never waits on a lock or a
// FUSE daemon, so it is closed on the spot instead of paying a thread-pool round trip.
export function closePathDescriptor(fd: number): void {
  closeSync(fd);
}
