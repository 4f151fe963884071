import { displayPath, invalidPath, outsideWorkspace } from './workspace-fs.error.js';

export const MAX_PATH_BYTES = 4096;
export const MAX_PATH_SEGMENTS = 256;
export const MAX_SEGMENT_BYTES = 255;

export interface ParsedPath {
  // Shortened form of what was written, safe to put in a message.
  display: string;
  // Relative to the workspace root, exactly as written: '', '.', '..' are still there and nothing is decoded.
  segments: string[];
  // The path ends in '/' (or '/.'): the final entry must be a directory.
  trailingSlash: boolean;
}

// Lexical checks only: no decoding, no Unicode normalization, no file system access. Where the path really
// leads is decided later on opened descriptors; this just rejects what can never be valid.
// `creates`: the caller is about to give an entry this name (write_file, edit_file, move_file's destination),
// so characters that make a name read as another one are refused too (see misleadingCharacter).
export function parseWorkspacePath(root: string, userPath: unknown, options: { allowEmpty?: boolean; creates?: boolean } = {}): ParsedPath {
  if (typeof userPath !== 'string') throw invalidPath(String(userPath), 'the path must be a string');
  const display = displayPath(userPath);
  if (userPath.includes('\0')) throw invalidPath(display, 'it contains a NUL byte');
  const misleading = options.creates ? misleadingCharacter(userPath) : undefined;
  if (misleading) {
    throw invalidPath(
      display,
      `it contains ${misleading}, which would make the name read differently from what it is; choose a name without it`,
    );
  }
  if (userPath === '') {
    if (options.allowEmpty) return { display: '.', segments: [], trailingSlash: false };
    throw invalidPath(display, "it is empty; give a path relative to the workspace root, e.g. 'src/index.ts'");
  }
  const bytes = Buffer.byteLength(userPath, 'utf8');
  if (bytes > MAX_PATH_BYTES) throw invalidPath(display, `it is ${bytes} bytes long; the limit is ${MAX_PATH_BYTES}`);
  const raw = userPath.split('/');
  if (raw.length > MAX_PATH_SEGMENTS) {
    throw invalidPath(display, `it has ${raw.length} segments; the limit is ${MAX_PATH_SEGMENTS}`);
  }
  const long = raw.findIndex((s) => Buffer.byteLength(s, 'utf8') > MAX_SEGMENT_BYTES);
  if (long !== -1) throw invalidPath(display, `segment ${long + 1} is longer than ${MAX_SEGMENT_BYTES} bytes`);

  const segments = userPath.startsWith('/') ? stripRoot(root, raw.slice(1), display) : raw;
  let depth = 0;
  for (const s of segments) {
    if (s === '' || s === '.') continue;
    depth += s === '..' ? -1 : 1;
    // Climbing above the root is refused before any I/O, whatever lies there.
    if (depth < 0) throw outsideWorkspace(display);
  }
  const last = segments.filter((s) => s !== '').at(-1);
  const trailingSlash = segments.some((s) => s !== '' && s !== '.') && (userPath.endsWith('/') || last === '.');
  return { display, segments, trailingSlash };
}

// An absolute path must name the workspace root (segment by segment) before anything else; '..' is not
// folded here, so '/ws/../ws/x' is judged as '../ws/x' relative to the root and refused.
function stripRoot(root: string, segments: string[], display: string): string[] {
  let i = 0;
  for (const rootSegment of splitAbsolute(root)) {
    while (i < segments.length && (segments[i] === '' || segments[i] === '.')) i++;
    if (segments[i] !== rootSegment) throw outsideWorkspace(display);
    i++;
  }
  return segments.slice(i);
}

// Control characters (a newline or an escape sequence in a name rewrites what a listing or a terminal shows)
// and the bidirectional embeddings, overrides and isolates (U+202E shows 'exe.txt' as 'txt.exe'), named
// as Unicode names them.
const CONTROL_NAMES = [
  'NULL',
  'START OF HEADING',
  'START OF TEXT',
  'END OF TEXT',
  'END OF TRANSMISSION',
  'ENQUIRY',
  'ACKNOWLEDGE',
  'BELL',
  'BACKSPACE',
  'CHARACTER TABULATION',
  'LINE FEED',
  'LINE TABULATION',
  'FORM FEED',
  'CARRIAGE RETURN',
  'SHIFT OUT',
  'SHIFT IN',
  'DATA LINK ESCAPE',
  'DEVICE CONTROL ONE',
  'DEVICE CONTROL TWO',
  'DEVICE CONTROL THREE',
  'DEVICE CONTROL FOUR',
  'NEGATIVE ACKNOWLEDGE',
  'SYNCHRONOUS IDLE',
  'END OF TRANSMISSION BLOCK',
  'CANCEL',
  'END OF MEDIUM',
  'SUBSTITUTE',
  'ESCAPE',
  'INFORMATION SEPARATOR FOUR',
  'INFORMATION SEPARATOR THREE',
  'INFORMATION SEPARATOR TWO',
  'INFORMATION SEPARATOR ONE',
];
const FORMAT_NAMES: Record<number, string> = {
  0x7f: 'DELETE',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
};
const MISLEADING = /[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/;

// The first such character of `name`, as "U+202E RIGHT-TO-LEFT OVERRIDE"; undefined when it has none.
export function misleadingCharacter(name: string): string | undefined {
  const found = MISLEADING.exec(name)?.[0];
  if (found === undefined) return undefined;
  const code = found.charCodeAt(0);
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} ${CONTROL_NAMES[code] ?? FORMAT_NAMES[code]}`;
}

export const splitAbsolute = (p: string): string[] => p.split('/').filter((s) => s !== '');

// Segments of `real` below `root`, or null when `real` is not the root or inside it. Compared segment by
// segment, so '/ws-evil' is not inside '/ws'.
export function segmentsBelow(root: string, real: string): string[] | null {
  if (!real.startsWith('/')) return null;
  const rootSegments = splitAbsolute(root);
  const realSegments = splitAbsolute(real);
  if (realSegments.length < rootSegments.length) return null;
  for (let i = 0; i < rootSegments.length; i++) if (realSegments[i] !== rootSegments[i]) return null;
  return realSegments.slice(rootSegments.length);
}

export const toRelativePath = (segments: readonly string[]): string => (segments.length ? segments.join('/') : '.');
