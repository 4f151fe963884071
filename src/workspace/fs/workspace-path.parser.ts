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
export function parseWorkspacePath(
  root: string,
  userPath: unknown,
  options: { allowEmpty?: boolean } = {},
): ParsedPath {
  if (typeof userPath !== 'string') throw invalidPath(String(userPath), 'the path must be a string');
  const display = displayPath(userPath);
  if (userPath.includes('\0')) throw invalidPath(display, 'it contains a NUL byte');
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
