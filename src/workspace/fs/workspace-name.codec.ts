import { isUtf8 } from 'node:buffer';
import type { Dirent } from 'node:fs';
import { segmentsBelow } from './workspace-path.parser.js';

// A name as the kernel knows it: the string when its bytes are UTF-8, the bytes themselves otherwise.
export type RawName = string | Buffer;

// A command can create a name that is not UTF-8, which a JS string cannot hold (Node would decode the bad
// bytes to U+FFFD, a name that does not exist). Such a name is shown with each byte outside valid UTF-8
// written %XX and each literal '%' written %25, and flagged; a UTF-8 name is shown as it is.
export interface DecodedName {
  text: string;
  raw: RawName;
  escaped: boolean;
}

export const REPLACEMENT_CHARACTER = '\ufffd';

export function nameFromBytes(bytes: Buffer): DecodedName {
  if (isUtf8(bytes)) {
    const text = bytes.toString('utf8');
    return { text, raw: text, escaped: false };
  }
  return { text: escapeBytes(bytes), raw: bytes, escaped: true };
}

function escapeBytes(bytes: Buffer): string {
  let text = '';
  let i = 0;
  while (i < bytes.length) {
    const length = utf8SequenceLength(bytes, i);
    if (length === 0) {
      text += `%${bytes[i].toString(16).toUpperCase().padStart(2, '0')}`;
      i++;
    } else {
      const piece = bytes.toString('utf8', i, i + length);
      text += piece === '%' ? '%25' : piece;
      i += length;
    }
  }
  return text;
}

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;
const within = (byte: number | undefined, low: number, high: number) => byte !== undefined && byte >= low && byte <= high;

// Length of the well-formed UTF-8 sequence at `i` (Unicode's table 3-7), 0 when the byte there starts none.
function utf8SequenceLength(bytes: Buffer, i: number): number {
  const b = bytes[i];
  if (b < 0x80) return 1;
  const [b1, b2, b3] = [bytes[i + 1], bytes[i + 2], bytes[i + 3]];
  if (b >= 0xc2 && b <= 0xdf) return isContinuation(b1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    const second = b === 0xe0 ? within(b1, 0xa0, 0xbf) : b === 0xed ? within(b1, 0x80, 0x9f) : isContinuation(b1);
    return second && isContinuation(b2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const second = b === 0xf0 ? within(b1, 0x90, 0xbf) : b === 0xf4 ? within(b1, 0x80, 0x8f) : isContinuation(b1);
    return second && isContinuation(b2) && isContinuation(b3) ? 4 : 0;
  }
  return 0;
}

const ESCAPE = /%[0-9A-F]{2}/;

// The bytes an escaped segment stands for, or null. Only the one form a listing writes is accepted, and
// only for bytes that are not UTF-8: an escape never spells a UTF-8 name ('..', 'a/b', 'x.txt') a second
// way, and a segment that is not such an escape has no other meaning than its literal one.
export function bytesOfEscapedName(segment: string): Buffer | null {
  if (!ESCAPE.test(segment)) return null;
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    if (segment[i] === '%') {
      const hex = segment.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return null;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      const code = segment.codePointAt(i)!;
      const char = String.fromCodePoint(code);
      for (const byte of Buffer.from(char, 'utf8')) bytes.push(byte);
      i += char.length - 1;
    }
  }
  const decoded = Buffer.from(bytes);
  if (isUtf8(decoded)) return null;
  // Escaping again must give back the segment: one spelling per name, '/' and NUL never decoded into one.
  return escapeBytes(decoded) === segment ? decoded : null;
}

// A path the kernel gave as bytes split at each '/' (as String.split, empty segments kept), each segment
// as a listing shows it.
export function namesOfPath(path: Buffer): DecodedName[] {
  const names: DecodedName[] = [];
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i === path.length || path[i] === 0x2f) {
      names.push(nameFromBytes(path.subarray(start, i)));
      start = i + 1;
    }
  }
  return names;
}

export const sameRawName = (a: RawName, b: RawName): boolean => (typeof a === 'string' || typeof b === 'string' ? a === b : a.equals(b));

// Segments below `root` of a path the kernel gave (readlink of /proc/self/fd/N) as bytes, each as listings
// show it, with the last one's name for the kernel; null when it is not the root or inside it. Compared
// on the exact bytes: a name that is not UTF-8 never matches a root segment through a lossy decoding.
export function realSegmentsOf(root: string, real: Buffer): { segments: string[]; raw: RawName } | null {
  if (isUtf8(real)) return segmentsOfText(root, real.toString('utf8'));
  const names = namesOfPath(real).filter((n) => n.text !== '');
  const segments = segmentsBelow(root, `/${names.map((n) => n.text).join('/')}`);
  if (segments === null || real[0] !== 0x2f) return null;
  return { segments, raw: segments.length === 0 ? '' : names[names.length - 1].raw };
}

// The same for a path already known to be UTF-8.
export function segmentsOfText(root: string, real: string): { segments: string[]; raw: RawName } | null {
  const segments = segmentsBelow(root, real);
  return segments === null ? null : { segments, raw: segments.at(-1) ?? '' };
}

// A Dirent, or one read as bytes whose name is shown escaped (`raw` is then the bytes): what the listing
// and the search walk over.
export type NamedDirent = Pick<Dirent, 'name' | 'isDirectory' | 'isFile' | 'isSymbolicLink'> & { raw?: Buffer };

export function namedDirent(dirent: Dirent<Buffer>): NamedDirent {
  const { text, raw } = nameFromBytes(dirent.name);
  return {
    name: text,
    raw: typeof raw === 'string' ? undefined : raw,
    isDirectory: () => dirent.isDirectory(),
    isFile: () => dirent.isFile(),
    isSymbolicLink: () => dirent.isSymbolicLink(),
  };
}
