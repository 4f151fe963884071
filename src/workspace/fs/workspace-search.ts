import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs';
import { RE2JS } from 're2js';
import { badRequest } from '../../common/errors/app-error.js';
import { isUtf8 } from 'node:buffer';
import { blockingIo, closePathDescriptor, type FsPath } from './descriptor-io.js';
import { namedDirent, type NamedDirent, realSegmentsOf, REPLACEMENT_CHARACTER, segmentsOfText } from './workspace-name.codec.js';
import { specialFile, toWorkspaceFsError } from './workspace-fs.error.js';
import { compileGlob, type PathGlob } from './workspace-glob.js';
import { parseWorkspacePath, toRelativePath } from './workspace-path.parser.js';
import { fdPath, O_PATH, resolveWorkspacePath } from './workspace-path.resolver.js';

export interface SearchWorkspaceOptions {
  pattern: string;
  glob?: string;
  caseSensitive?: boolean;
  maxResults: number;
  contextLines: number;
  // Larger files are skipped and counted.
  maxFileBytes: number;
  // Time the search may take on its thread; past it, it answers what it found so far (truncated, with why).
  budgetMs?: number;
}

export interface SearchMatch {
  path: string;
  line: number;
  text: string;
  // A segment of `path` is a name that is not UTF-8, shown escaped (%XX) as list_files shows it.
  escapedPath?: true;
  before?: string[];
  after?: string[];
}

export interface SearchWorkspaceResult {
  matches: SearchMatch[];
  truncated: boolean;
  filesSearched: number;
  // Binary files and files over the size cap, not searched.
  filesSkipped: number;
  // Why it stopped early: at maxResults, or at its time budget (a pattern costly to match on these files).
  stoppedBy?: 'maxResults' | 'budget';
  hint?: string;
}

// Each level holds one directory descriptor while its subtree is searched.
const MAX_DEPTH = 64;
const SNIFF_BYTES = 8192;
// A minified line would fill the answer: matched lines and context lines are cut at this length.
const MAX_LINE_CHARS = 500;
const DIRECTORY_FLAGS = O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const SKIPPED_DIRECTORIES = new Set(['.git']);
const REGEX_SYNTAX = /[\\^$.|?*+()[\]{}]/;

interface LineMatcher {
  // False when the file cannot contain a match, judged on its raw bytes (a literal).
  mayMatchBytes: ((bytes: Buffer) => boolean) | null;
  // False when none of the whole lines in `text` can match: rules out most of a file in a few passes.
  mayMatchText: ((text: string) => boolean) | null;
  test(line: string): boolean;
}

// The pattern runs on RE2 (linear time); Perl-only syntax such as backreferences and lookaround is refused
// with RE2's own reason. Checked on the event loop before the search is handed to a thread, and again there.
export function compileSearchPattern(pattern: string, caseSensitive = true): LineMatcher {
  if (caseSensitive && !REGEX_SYNTAX.test(pattern)) {
    // A plain literal: files without it are skipped on their bytes, before any decoding.
    const needle = Buffer.from(pattern, 'utf8');
    return { mayMatchBytes: (bytes) => bytes.indexOf(needle) !== -1, mayMatchText: null, test: (line) => line.includes(pattern) };
  }
  const flags = caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE;
  let line: RE2JS;
  let whole: RE2JS | null;
  try {
    line = RE2JS.compile(pattern, flags);
    // The whole text, with ^ and $ at line ends, rules out most files in one pass. \A and \z mean the
    // start and end of a line here, which the whole-text pass would not see: those patterns skip it.
    whole = /\\[Az]/.test(pattern) ? null : RE2JS.compile(pattern, flags | RE2JS.MULTILINE);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw badRequest(
      'invalid_pattern',
      `The pattern is not a regular expression RE2 accepts (${reason.slice(0, 200)}); backreferences and lookaround are not supported, so rewrite it without them, or escape special characters to search for them literally`,
      { pattern: pattern.slice(0, 160) },
    );
  }
  return {
    mayMatchBytes: null,
    mayMatchText: whole === null ? null : (text) => whole.matcher(text).find(),
    test: (l) => line.matcher(l).find(),
  };
}

interface Search {
  root: string;
  base: string[];
  matcher: LineMatcher;
  glob: PathGlob | null;
  opts: SearchWorkspaceOptions;
  buffer: Buffer;
  budget: SearchBudget;
  result: SearchWorkspaceResult;
}

// RE2 runs in linear time, but the factor can be enormous: `[a-j ]{1,400}[ab]{40}` costs 15-80 µs a
// character, over a minute for a 1 MiB file, and one call of the engine cannot be interrupted. So each call
// is judged before it is made: its text's length times the rate of the last long call must fit in what is left
// of the budget. A long text met before any rate is known is first timed on a prefix, twice (the first run
// also pays for compiling the engine's states). Short texts run unjudged: each costs little, and the deadline
// is checked between them.
const PROBE_CHARS = 2048;
const RATED_CHARS = 1024;
// The whole-text pass runs over whole lines in pieces of at most this size, each one call of the engine,
// and smaller ones when the budget left is short.
const CHUNK_CHARS = 64 * 1024;

class SearchBudget {
  private readonly deadline: number;
  // Microseconds a character, from the last call on a text of RATED_CHARS or more (0: none yet).
  private rate = 0;
  exhausted = false;

  constructor(readonly ms: number) {
    this.deadline = performance.now() + ms;
  }

  get over(): boolean {
    if (!this.exhausted && performance.now() >= this.deadline) this.exhausted = true;
    return this.exhausted;
  }

  // How many characters the next piece of the whole-text pass should hold: a quarter of what is left.
  pieceChars(): number {
    if (this.rate === 0) return CHUNK_CHARS;
    const left = ((this.deadline - performance.now()) * 1000) / this.rate / 4;
    return Math.max(RATED_CHARS, Math.min(CHUNK_CHARS, Math.floor(left)));
  }

  // Times `match` on a prefix of a long text when no rate is known yet.
  calibrate(text: string, match: (text: string) => boolean): void {
    if (this.rate !== 0 || text.length <= PROBE_CHARS) return;
    const probe = text.slice(0, PROBE_CHARS);
    this.timed(probe, match);
    if (!this.over) this.timed(probe, match);
  }

  // What `match(text)` answers, or null when it would not finish within the budget (not run).
  run(text: string, match: (text: string) => boolean): boolean | null {
    this.calibrate(text, match);
    if (this.over) return null;
    if (performance.now() + (text.length * this.rate) / 1000 > this.deadline) {
      this.exhausted = true;
      return null;
    }
    return this.timed(text, match);
  }

  private timed(text: string, match: (text: string) => boolean): boolean {
    const start = performance.now();
    const found = match(text);
    if (text.length >= RATED_CHARS) this.rate = ((performance.now() - start) * 1000) / text.length;
    return found;
  }
}

// A search with blocking calls, for a worker thread. Directories are entered by descriptor, checked with
// the kernel to be inside the workspace, never through a symlink; symlinks, FIFOs and devices are skipped.
export async function searchWorkspace(root: string, userPath: string, opts: SearchWorkspaceOptions): Promise<SearchWorkspaceResult> {
  const parsed = parseWorkspacePath(root, userPath, { allowEmpty: true });
  const matcher = compileSearchPattern(opts.pattern, opts.caseSensitive);
  const glob = opts.glob ? compileGlob(opts.glob) : null;
  try {
    const resolved = await resolveWorkspacePath(root, parsed, { final: 'follow', io: blockingIo });
    try {
      const stat = resolved.stat!;
      const search: Search = {
        root,
        base: resolved.segments,
        matcher,
        glob,
        opts,
        buffer: Buffer.allocUnsafe(opts.maxFileBytes),
        budget: new SearchBudget(opts.budgetMs ?? Number.POSITIVE_INFINITY),
        result: { matches: [], truncated: false, filesSearched: 0, filesSkipped: 0 },
      };
      const escaped = !isUtf8(readlinkSync(fdPath(resolved.fd!), { encoding: 'buffer' }));
      if (stat.isDirectory()) searchDirectory(search, resolved.fd!, resolved.segments, 1, escaped);
      else if (stat.isFile())
        searchFile(search, fdPath(resolved.fd!), toRelativePath(resolved.segments), constants.O_RDONLY | constants.O_NONBLOCK, escaped);
      else throw specialFile(parsed.display, stat);
      const { result } = search;
      if (search.budget.exhausted) {
        result.truncated = true;
        result.stoppedBy = 'budget';
        result.hint = `The search stopped after ${search.budget.ms / 1000} s, its time budget, having searched ${result.filesSearched} ${result.filesSearched === 1 ? 'file' : 'files'} (the last perhaps in part): the pattern is costly to match against these files. Narrow the pattern (fewer or shorter repetitions such as {1,400}) or the path or glob, and search again`;
      } else if (result.truncated) {
        result.stoppedBy = 'maxResults';
        result.hint = `Stopped at ${opts.maxResults} matches; narrow the search with path or glob, or raise maxResults`;
      }
      return result;
    } finally {
      resolved.close();
    }
  } catch (err) {
    throw toWorkspaceFsError(err, parsed.display);
  }
}

// `escaped`: a segment of `segments` is a name that is not UTF-8.
function searchDirectory(search: Search, dir: number, segments: string[], depth: number, escaped: boolean): void {
  let entries: NamedDirent[];
  try {
    entries = readdirSync(fdPath(dir), { withFileTypes: true });
    // Node decodes a name that is not UTF-8 with U+FFFD: such a directory is read again as bytes.
    if (entries.some((entry) => entry.name.includes(REPLACEMENT_CHARACTER))) {
      entries = readdirSync(fdPath(dir), { withFileTypes: true, encoding: 'buffer' }).map(namedDirent);
    }
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (search.result.truncated || search.budget.over) return;
    const entryPath = fdPath(dir, entry.raw ?? entry.name);
    const entryEscaped = escaped || entry.raw !== undefined;
    let isDirectory = entry.isDirectory();
    let isFile = entry.isFile();
    if (!isDirectory && !isFile && !entry.isSymbolicLink()) {
      // Some file systems do not say the type in readdir.
      try {
        const stat = lstatSync(entryPath);
        isDirectory = stat.isDirectory();
        isFile = stat.isFile();
      } catch {
        continue;
      }
    }
    const childSegments = [...segments, entry.name];
    if (isDirectory) {
      if (!SKIPPED_DIRECTORIES.has(entry.name) && depth < MAX_DEPTH)
        searchSubdirectory(search, entryPath, childSegments, depth + 1, entryEscaped);
    } else if (isFile) {
      const relative = childSegments.slice(search.base.length).join('/');
      if (search.glob && !search.glob.matches(relative, entry.name)) continue;
      searchFile(search, entryPath, childSegments.join('/'), FILE_FLAGS, entryEscaped);
    }
  }
}

function searchSubdirectory(search: Search, entryPath: FsPath, segments: string[], depth: number, escaped: boolean): void {
  let child: number;
  try {
    // O_NOFOLLOW: a directory swapped for a symlink since readdir fails to open instead of being followed.
    child = openSync(entryPath, DIRECTORY_FLAGS);
  } catch {
    return;
  }
  try {
    const real = readlinkSync(fdPath(child));
    const below = real.includes(REPLACEMENT_CHARACTER)
      ? realSegmentsOf(search.root, readlinkSync(fdPath(child), { encoding: 'buffer' }))
      : segmentsOfText(search.root, real);
    if (below === null) return;
    searchDirectory(search, child, segments, depth, escaped);
  } finally {
    closePathDescriptor(child);
  }
}

function searchFile(search: Search, filePath: FsPath, path: string, flags: number, escaped: boolean): void {
  let fd: number;
  try {
    fd = openSync(filePath, flags);
  } catch {
    // Vanished, or swapped for a symlink (ELOOP under O_NOFOLLOW) since it was listed.
    return;
  }
  let length = 0;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return;
    if (stat.size > search.opts.maxFileBytes) {
      search.result.filesSkipped++;
      return;
    }
    // One buffer for every file: a file that grew past the cap since fstat is read up to the cap.
    for (let n; length < search.buffer.length && (n = readSync(fd, search.buffer, length, search.buffer.length - length, length)) > 0;) {
      length += n;
    }
  } catch {
    return;
  } finally {
    closeSync(fd);
  }
  const bytes = search.buffer.subarray(0, length);
  if (bytes.subarray(0, SNIFF_BYTES).includes(0)) {
    search.result.filesSkipped++;
    return;
  }
  search.result.filesSearched++;
  if (search.matcher.mayMatchBytes && !search.matcher.mayMatchBytes(bytes)) return;
  const first = search.result.matches.length;
  matchLines(search, path, bytes.toString('utf8'));
  if (escaped) for (let i = first; i < search.result.matches.length; i++) search.result.matches[i].escapedPath = true;
}

function matchLines(search: Search, path: string, text: string): void {
  const { matcher } = search;
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (matcher.mayMatchText) search.budget.calibrate(text, matcher.mayMatchText);
  // Pieces of whole lines: [from, to) and where they start and end in the text.
  for (let from = 0, start = 0; from < lines.length;) {
    const chunk = search.budget.pieceChars();
    let to = from;
    let end = start;
    do end += lines[to++].length + 1;
    while (to < lines.length && end - start + lines[to].length < chunk);
    const piece = matcher.mayMatchText ? search.budget.run(text.slice(start, end), matcher.mayMatchText) : true;
    if (piece === null) return;
    if (piece && !matchPiece(search, path, lines, from, to)) return;
    from = to;
    start = end;
  }
}

// False once the search must stop (maxResults or the budget).
function matchPiece(search: Search, path: string, lines: string[], from: number, to: number): boolean {
  const { opts, result, matcher, budget } = search;
  for (let i = from; i < to; i++) {
    const line = lines[i];
    const found = budget.run(line, matcher.test);
    if (found === null) return false;
    if (!found) continue;
    if (result.matches.length >= opts.maxResults) {
      result.truncated = true;
      return false;
    }
    const match: SearchMatch = { path, line: i + 1, text: clip(line) };
    if (opts.contextLines > 0) {
      match.before = lines.slice(Math.max(0, i - opts.contextLines), i).map(clip);
      match.after = lines.slice(i + 1, i + 1 + opts.contextLines).map(clip);
    }
    result.matches.push(match);
  }
  return true;
}

function clip(line: string): string {
  const l = line.endsWith('\r') ? line.slice(0, -1) : line;
  return l.length > MAX_LINE_CHARS ? `${l.slice(0, MAX_LINE_CHARS)}...` : l;
}
