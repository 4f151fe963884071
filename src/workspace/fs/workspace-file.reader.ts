import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { asyncIo, type DescriptorIo } from './descriptor-io.js';
import { badRequest } from '../../common/errors/app-error.js';
import { isADirectory, specialFile, toWorkspaceFsError, WorkspaceFsError } from './workspace-fs.error.js';
import { parseWorkspacePath, toRelativePath, type ParsedPath } from './workspace-path.parser.js';
import { fdPath, resolveWorkspacePath } from './workspace-path.resolver.js';

export type ReadEncoding = 'utf8' | 'base64';

export interface ReadWorkspaceFileOptions {
  // utf8: 1-based first line (default 1). base64: 0-based byte offset (default 0).
  offset?: number;
  // utf8 only: maximum number of lines.
  limit?: number;
  maxBytes: number;
  encoding?: ReadEncoding;
  io?: DescriptorIo;
}

export interface ReadWorkspaceFileResult {
  path: string;
  encoding: ReadEncoding;
  content: string;
  size: number;
  truncated: boolean;
  totalLines?: number;
  nextOffset?: number;
  hint?: string;
}

export interface HashWorkspaceFileResult {
  path: string;
  size: number;
  sha256: string;
}

const SNIFF_BYTES = 8192;
const SCAN_CHUNK_BYTES = 64 * 1024;
const HASH_CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

// A descriptor opened for reading, with the calls to use on it.
interface OpenFile {
  fd: number;
  io: DescriptorIo;
}

interface OpenedFile {
  file: OpenFile;
  size: number;
  path: string;
}

// Resolves without opening anything but O_PATH descriptors, refuses non-regular files, and only then opens
// the very inode that was checked: reopening /proc/self/fd/<n> of an O_PATH descriptor reaches that inode
// whatever happened to its name since (O_NONBLOCK all the same, so nothing could ever block the open).
async function openRegularFile(root: string, parsed: ParsedPath, io: DescriptorIo): Promise<OpenedFile> {
  const resolved = await resolveWorkspacePath(root, parsed, { final: 'follow', io });
  try {
    const stat = resolved.stat!;
    if (stat.isDirectory()) throw isADirectory(parsed.display, 'use list_files to see what it contains');
    if (!stat.isFile()) throw specialFile(parsed.display, stat);
    const fd = await io.open(fdPath(resolved.fd!), constants.O_RDONLY | constants.O_NONBLOCK);
    return { file: { fd, io }, size: stat.size, path: toRelativePath(resolved.segments) };
  } finally {
    resolved.close();
  }
}

export async function readWorkspaceFile(root: string, userPath: string, opts: ReadWorkspaceFileOptions): Promise<ReadWorkspaceFileResult> {
  const encoding = opts.encoding ?? 'utf8';
  const maxBytes = positiveInteger('maxBytes', opts.maxBytes);
  const parsed = parseWorkspacePath(root, userPath);
  try {
    const { file, size, path } = await openRegularFile(root, parsed, opts.io ?? asyncIo);
    try {
      if (encoding === 'base64') {
        const offset = opts.offset === undefined ? 0 : nonNegativeInteger('offset', opts.offset);
        return await readBase64(file, size, path, offset, maxBytes);
      }
      const offset = opts.offset === undefined ? 1 : positiveInteger('offset', opts.offset);
      const limit = opts.limit === undefined ? Number.MAX_SAFE_INTEGER : positiveInteger('limit', opts.limit);
      return await readLines(file, size, { path, display: parsed.display, offset, limit, maxBytes });
    } finally {
      await file.io.close(file.fd);
    }
  } catch (err) {
    throw toWorkspaceFsError(err, parsed.display);
  }
}

export async function hashWorkspaceFile(root: string, userPath: string): Promise<HashWorkspaceFileResult> {
  const parsed = parseWorkspacePath(root, userPath);
  try {
    const { file, path } = await openRegularFile(root, parsed, asyncIo);
    try {
      const hash = createHash('sha256');
      const buffer = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
      let size = 0;
      for (;;) {
        const bytesRead = await file.io.read(file.fd, buffer, 0, buffer.length, size);
        if (bytesRead === 0) break;
        hash.update(buffer.subarray(0, bytesRead));
        size += bytesRead;
      }
      return { path, size, sha256: hash.digest('hex') };
    } finally {
      await file.io.close(file.fd);
    }
  } catch (err) {
    throw toWorkspaceFsError(err, parsed.display);
  }
}

interface LineWindow {
  path: string;
  display: string;
  offset: number;
  limit: number;
  maxBytes: number;
}

async function readLines(file: OpenFile, size: number, w: LineWindow): Promise<ReadWorkspaceFileResult> {
  // From the first line (the usual call), one read serves both the binary sniff and the window.
  const head = w.offset === 1 ? await readAt(file, 0, w.maxBytes + 1, size) : null;
  const sniff = head ? head.subarray(0, SNIFF_BYTES) : await readAt(file, 0, SNIFF_BYTES, size);
  if (looksBinary(sniff, sniff.length < SNIFF_BYTES)) {
    throw new WorkspaceFsError(
      'binary_file',
      `'${w.display}' looks like a binary file (NUL bytes or invalid UTF-8); call read_file again with encoding: "base64" to get its bytes`,
    );
  }
  const found = await findLineStart(file, w.offset);
  const base = { path: w.path, encoding: 'utf8' as const, size };
  if ('totalLines' in found) {
    return { ...base, content: '', truncated: false, ...pastTheEnd(found.totalLines, w.offset) };
  }
  const { start } = found;

  // One byte more than allowed tells whether anything follows the window, so at most maxBytes + 1 bytes
  // are read however large the file is.
  const window = head ?? (await readAt(file, start, w.maxBytes + 1, size));
  const atEof = window.length <= w.maxBytes;
  const available = atEof ? window.length : w.maxBytes;
  let end = 0;
  let lines = 0;
  while (lines < w.limit && end < available) {
    const nl = window.indexOf(NEWLINE, end);
    if (nl !== -1 && nl < available) {
      end = nl + 1;
      lines++;
      continue;
    }
    // The last line without a newline, or a line whose newline is exactly the byte past the cap.
    if (atEof || (nl === available && lines === 0)) {
      end = available;
      lines++;
    }
    break;
  }
  let cutLine = false;
  if (lines === 0 && available > 0) {
    end = utf8Boundary(window, w.maxBytes);
    cutLine = true;
  }

  const content = window.subarray(0, end).toString('utf8');
  const truncated = end < window.length;
  const totalLines = atEof ? w.offset - 1 + countLines(window) : undefined;
  if (!truncated) {
    if (lines === 0 && w.offset > 1) return { ...base, content, truncated, ...pastTheEnd(totalLines!, w.offset) };
    return { ...base, content, truncated, totalLines };
  }
  const nextOffset = w.offset + (cutLine ? 1 : lines);
  const of = totalLines === undefined ? '' : ` of ${totalLines}`;
  const capped = lines < w.limit ? ` (output capped at ${w.maxBytes} bytes)` : '';
  const hint = cutLine
    ? `Line ${w.offset} is longer than ${w.maxBytes} bytes and was cut; call read_file again with offset: ${nextOffset} for the following lines, or with encoding: "base64" to read the raw bytes`
    : `Showing lines ${w.offset}-${w.offset + lines - 1}${of}${capped}; call read_file again with offset: ${nextOffset} to read on`;
  return { ...base, content, truncated, totalLines, nextOffset, hint };
}

const pastTheEnd = (totalLines: number, offset: number) => ({
  totalLines,
  hint: `The file has ${totalLines} lines; offset ${offset} is past the end`,
});

async function readBase64(file: OpenFile, size: number, path: string, offset: number, maxBytes: number): Promise<ReadWorkspaceFileResult> {
  // The encoded text must fit in maxBytes, so fewer raw bytes are read (4 characters per 3 bytes).
  const rawCap = Math.max(3, Math.floor(maxBytes / 4) * 3);
  const chunk = await readAt(file, offset, rawCap + 1, size);
  const bytes = chunk.subarray(0, rawCap);
  const truncated = chunk.length > rawCap;
  const result: ReadWorkspaceFileResult = {
    path,
    encoding: 'base64',
    content: bytes.toString('base64'),
    size,
    truncated,
  };
  if (truncated) {
    result.nextOffset = offset + bytes.length;
    result.hint = `Returned bytes ${offset}-${offset + bytes.length - 1} of ${size}; call read_file again with encoding: "base64" and offset: ${result.nextOffset} to read on`;
  }
  return result;
}

// Byte position where line `offset` starts, or the number of lines when the file has fewer. Reads the
// preceding bytes in fixed chunks; nothing before the window is kept.
async function findLineStart(file: OpenFile, offset: number): Promise<{ start: number } | { totalLines: number }> {
  if (offset === 1) return { start: 0 };
  const buffer = Buffer.allocUnsafe(SCAN_CHUNK_BYTES);
  let line = 1;
  let position = 0;
  let lastByte: number | null = null;
  for (;;) {
    const bytesRead = await file.io.read(file.fd, buffer, 0, buffer.length, position);
    if (bytesRead === 0) return { totalLines: line - 1 + (lastByte !== null && lastByte !== NEWLINE ? 1 : 0) };
    for (let nl = buffer.indexOf(NEWLINE); nl !== -1 && nl < bytesRead; nl = buffer.indexOf(NEWLINE, nl + 1)) {
      if (++line === offset) return { start: position + nl + 1 };
    }
    lastByte = buffer[bytesRead - 1];
    position += bytesRead;
  }
}

function countLines(data: Buffer): number {
  let newlines = 0;
  for (let i = data.indexOf(NEWLINE); i !== -1; i = data.indexOf(NEWLINE, i + 1)) newlines++;
  return newlines + (data.length > 0 && data[data.length - 1] !== NEWLINE ? 1 : 0);
}

// Reads up to `length` bytes at `position`, no further than the size fstat gave (no buffer bigger than
// the file, no extra read to find the end); a file that grew since is read as it was then.
async function readAt(file: OpenFile, position: number, length: number, size: number): Promise<Buffer> {
  const wanted = Math.max(0, Math.min(length, size - position));
  const buffer = Buffer.allocUnsafe(wanted);
  let filled = 0;
  while (filled < wanted) {
    const bytesRead = await file.io.read(file.fd, buffer, filled, wanted - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

function looksBinary(sample: Buffer, wholeFile: boolean): boolean {
  if (sample.includes(0)) return true;
  try {
    // stream: a multi-byte character cut by the end of the sample is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: !wholeFile });
    return false;
  } catch {
    return true;
  }
}

// Largest length <= max that does not end inside a UTF-8 sequence.
function utf8Boundary(data: Buffer, max: number): number {
  let end = Math.min(max, data.length);
  while (end > 0 && end < data.length && (data[end] & 0xc0) === 0x80) end--;
  return end;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw badRequest('invalid_argument', `${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

function nonNegativeInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw badRequest('invalid_argument', `${name} must be a non-negative integer, got ${String(value)}`);
  }
  return value;
}
