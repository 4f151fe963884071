// Runnable doc sessions: the blocks of README.md and docs/ fenced as ```sh session, their commands and the
// answers they show, the comparison of an answer with what a command printed, and the run of a page's
// commands in one bash process. sessions.e2e-spec.ts runs every page against a started service.
//
// The format, in short: a line not starting with `#` is a command (a trailing `\` continues it). A `# ` line
// directly after a command whose text starts with `{`, `[` or `HTTP/` is its expectation, continued by
// lines starting with `#  `; then the command's stdout must have that shape, else the command must exit 0.
// In an expectation `…` (U+2026) is a wildcard: "…" any value, {…} any object, […] any array, "ab…" /
// "…yz" / "a…b…c" strings, a bare … member or element allows others. After `HTTP/1.1 200 OK` (curl -i),
// `# Name: value` lines are headers the answer must have, then the body's JSON.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

// The wildcard of expectations: U+2026, never three dots.
export const WILDCARD = '\u2026';

// ---------------------------------------------------------------------------------------------------------
// Pages: blocks, commands, expectations

export interface SessionBlock {
  // 1-based line of the opening fence in the page.
  line: number;
  // The block's lines between its fences, each with its line in the page.
  lines: Array<{ line: number; text: string }>;
}

export interface JsonExpectation {
  kind: 'json';
  line: number;
  // As written: the expectation's lines joined, without their `#` and leading spaces.
  text: string;
  pattern: Pattern;
}

export interface HttpExpectation {
  kind: 'http';
  line: number;
  text: string;
  status: number;
  headers: Array<{ name: string; value: string; line: number }>;
  body: { text: string; pattern: Pattern } | null;
}

export type Expectation = JsonExpectation | HttpExpectation;

export interface SessionCommand {
  // Lines of the command in the page (the first) and of its block's fence.
  line: number;
  blockLine: number;
  // As written, continuation lines joined with their trailing backslashes and newlines.
  text: string;
  expectation: Expectation | null;
}

// A page that breaks the format: which line, and why.
export class SessionFormatError extends Error {
  constructor(
    readonly line: number,
    readonly problem: string,
  ) {
    super(`line ${line}: ${problem}`);
    this.name = 'SessionFormatError';
  }
}

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

// The fenced blocks whose info string is exactly `sh session`. Fences follow CommonMark: up to three
// spaces of indentation (a fence indented further is the content of an indented code block, such as an
// example of the format itself), closed by a fence of the same character at least as long. A session
// fence inside another fenced block is that block's content, not a session.
export function extractSessionBlocks(markdown: string): SessionBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: SessionBlock[] = [];
  let open: { fence: string; indent: number; block: SessionBlock | null } | null = null;
  lines.forEach((text, index) => {
    const line = index + 1;
    const fence = FENCE.exec(text);
    if (open === null) {
      if (!fence || (fence[2][0] === '`' && fence[3].includes('`'))) return;
      const isSession = fence[3].trim() === 'sh session';
      open = { fence: fence[2], indent: fence[1].length, block: isSession ? { line, lines: [] } : null };
      return;
    }
    if (fence && fence[2][0] === open.fence[0] && fence[2].length >= open.fence.length && fence[3].trim() === '') {
      if (open.block) blocks.push(open.block);
      open = null;
      return;
    }
    // Content lines lose up to the fence's own indentation, as CommonMark has it.
    if (open.block) open.block.lines.push({ line, text: text.replace(new RegExp(`^ {0,${open.indent}}`), '') });
  });
  const unclosed = open as { block: SessionBlock | null } | null;
  if (unclosed?.block) throw new SessionFormatError(unclosed.block.line, 'the session block is never closed');
  return blocks;
}

const EXPECTATION_START = /^# (\{|\[|HTTP\/)/;
const CONTINUATION = /^# {2,}/;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*)$/;
const STATUS_LINE = /^HTTP\/\S+[ \t]+(\d{3})(?:[ \t].*)?$/;

// The commands of a block and the answers it shows for them (see the format). Throws SessionFormatError.
export function parseSessionBlock(block: SessionBlock): SessionCommand[] {
  const commands: SessionCommand[] = [];
  // The command whose expectation the next `#` line may still be (none after a blank or prose line).
  let attached: SessionCommand | null = null;
  // Where the next continuation line (`#  …`) goes: the JSON text of an expectation being written.
  let continuing: { append(text: string): void } | null = null;
  const lines = block.lines;
  for (let i = 0; i < lines.length; i++) {
    const { line, text } = lines[i];
    if (text.trim() === '') {
      attached = null;
      continuing = null;
      continue;
    }
    if (!text.startsWith('#')) {
      const command: SessionCommand = { line, blockLine: block.line, text, expectation: null };
      // An odd number of trailing backslashes: the last one escapes the line end.
      while (/(?:^|[^\\])(?:\\\\)*\\$/.test(command.text)) {
        i += 1;
        if (i >= lines.length) throw new SessionFormatError(line, 'the command ends with a backslash at the end of the block');
        command.text += `\n${lines[i].text}`;
      }
      commands.push(command);
      attached = command;
      continuing = null;
      continue;
    }
    if (continuing && CONTINUATION.test(text)) {
      continuing.append(text.replace(/^#\s+/, ''));
      continue;
    }
    const said = text.startsWith('# ') ? text.slice(2) : null;
    const expectation = attached?.expectation ?? null;
    if (attached && said !== null && expectation === null && EXPECTATION_START.test(text)) {
      const started = startExpectation(said, line);
      attached.expectation = started.expectation;
      continuing = started.continuing;
      continue;
    }
    if (expectation?.kind === 'http' && said !== null && expectation.body === null) {
      const header = HEADER_LINE.exec(said);
      if (header && !/^[{[]/.test(said)) {
        expectation.headers.push({ name: header[1], value: header[2].trim(), line });
        continuing = null;
        continue;
      }
      if (/^[{[]/.test(said)) {
        // Its pattern is parsed by finishExpectation once all its continuation lines are in.
        const body = { text: said, pattern: undefined as unknown as Pattern };
        expectation.body = body;
        continuing = { append: (more) => (body.text += more) };
        continue;
      }
    }
    if (EXPECTATION_START.test(text)) {
      throw new SessionFormatError(
        line,
        attached
          ? `a second expectation for the command at line ${attached.line} (a command has one: its stdout as JSON, or curl -i's status line, headers and body)`
          : 'an expectation that is not directly after a command (no blank or comment line may come between them)',
      );
    }
    // A prose comment: it ends what came before it.
    attached = null;
    continuing = null;
  }
  for (const command of commands) finishExpectation(command.expectation);
  return commands;
}

function startExpectation(said: string, line: number): { expectation: Expectation; continuing: { append(text: string): void } | null } {
  if (said.startsWith('HTTP/')) {
    const status = STATUS_LINE.exec(said.trim());
    if (!status) throw new SessionFormatError(line, `a status line is written like HTTP/1.1 200 OK, not '${said}'`);
    return { expectation: { kind: 'http', line, text: said, status: Number(status[1]), headers: [], body: null }, continuing: null };
  }
  // Its pattern is parsed by finishExpectation once all its continuation lines are in.
  const expectation: JsonExpectation = { kind: 'json', line, text: said, pattern: undefined as unknown as Pattern };
  return { expectation, continuing: { append: (more) => (expectation.text += more) } };
}

// Parses the JSON of an expectation once all its continuation lines are in.
function finishExpectation(expectation: Expectation | null): void {
  if (expectation === null) return;
  const parse = (text: string) => {
    try {
      return parsePattern(text);
    } catch (error) {
      throw new SessionFormatError(expectation.line, `the expectation is not JSON with … wildcards: ${(error as Error).message}`);
    }
  };
  if (expectation.kind === 'json') expectation.pattern = parse(expectation.text);
  else if (expectation.body) expectation.body.pattern = parse(expectation.body.text);
}

// Every command of a page, in order, its blocks one after another.
export function parseSessionPage(markdown: string): SessionCommand[] {
  return extractSessionBlocks(markdown).flatMap((block) => parseSessionBlock(block));
}

// ---------------------------------------------------------------------------------------------------------
// Expectations: JSON in which … is a wildcard

export type Pattern =
  | { kind: 'any' }
  | { kind: 'literal'; value: string | number | boolean | null }
  // A string with wildcards: the parts between them, in order (the first a prefix, the last a suffix).
  | { kind: 'text'; parts: string[] }
  // `open`: a bare … among the members allows members not listed.
  | { kind: 'object'; members: Array<[string, Pattern]>; open: boolean }
  // A bare … element (`rest`) allows any number of elements there.
  | { kind: 'array'; items: Array<Pattern | { kind: 'rest' }> };

// Parses JSON in which `…` (U+2026) may stand: as a whole string ("…", any value), inside a string
// ("ab…", "…yz", "a…b…c"), as an object member or an array element (bare: others allowed there), or as a
// value (bare, like "…"). Throws an Error saying where the text stops being that.
export function parsePattern(text: string): Pattern {
  const parser = new PatternParser(text);
  const pattern = parser.value();
  parser.end();
  return pattern;
}

class PatternParser {
  private at = 0;
  constructor(private readonly text: string) {}

  value(): Pattern {
    this.space();
    const c = this.text[this.at];
    if (c === WILDCARD) {
      this.at += 1;
      return { kind: 'any' };
    }
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return textPattern(this.string());
    const literal = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(this.text.slice(this.at));
    if (literal) {
      this.at += literal[0].length;
      return { kind: 'literal', value: JSON.parse(literal[0]) as number | boolean | null };
    }
    if (this.text.startsWith('...', this.at)) this.fail('three dots are not a wildcard; write … (U+2026)');
    this.fail(c === undefined ? 'the text ends where a value should be' : `unexpected '${c}' where a value should be`);
  }

  end(): void {
    this.space();
    if (this.at < this.text.length) this.fail(`unexpected '${this.text[this.at]}' after the value`);
  }

  private object(): Pattern {
    this.at += 1;
    const members: Array<[string, Pattern]> = [];
    let open = false;
    this.space();
    if (this.eat('}')) return { kind: 'object', members, open };
    for (;;) {
      this.space();
      if (this.eat(WILDCARD)) {
        open = true;
      } else {
        if (this.text[this.at] !== '"')
          this.fail(
            this.text.startsWith('...', this.at)
              ? 'three dots are not a wildcard; write … (U+2026)'
              : 'a member name (a "string") or … should be here',
          );
        const key = this.string();
        if (members.some(([name]) => name === key)) this.fail(`the member "${key}" is listed twice`);
        this.space();
        if (!this.eat(':')) this.fail(`':' should follow the member name "${key}"`);
        members.push([key, this.value()]);
      }
      this.space();
      if (this.eat('}')) return { kind: 'object', members, open };
      if (!this.eat(',')) this.fail("',' or '}' should be here");
    }
  }

  private array(): Pattern {
    this.at += 1;
    const items: Array<Pattern | { kind: 'rest' }> = [];
    this.space();
    if (this.eat(']')) return { kind: 'array', items };
    for (;;) {
      this.space();
      // A bare … element is the rest marker; `"…"` is one element of any value.
      if (this.text[this.at] === WILDCARD) {
        this.at += 1;
        items.push({ kind: 'rest' });
      } else {
        items.push(this.value());
      }
      this.space();
      if (this.eat(']')) return { kind: 'array', items };
      if (!this.eat(',')) this.fail("',' or ']' should be here");
    }
  }

  private string(): string {
    const match = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(this.text.slice(this.at));
    if (!match) this.fail('a string that is not closed, or holds a bad escape or a control character');
    this.at += match[0].length;
    return JSON.parse(match[0]) as string;
  }

  private space(): void {
    while (/\s/.test(this.text[this.at] ?? '')) this.at += 1;
  }

  private eat(token: string): boolean {
    if (!this.text.startsWith(token, this.at)) return false;
    this.at += token.length;
    return true;
  }

  private fail(problem: string): never {
    const shown =
      this.text.length > 60
        ? `${this.text.slice(Math.max(0, this.at - 30), this.at)}⟨here⟩${this.text.slice(this.at, this.at + 30)}`
        : `${this.text.slice(0, this.at)}⟨here⟩${this.text.slice(this.at)}`;
    throw new Error(`${problem} (at character ${this.at + 1}: ${shown})`);
  }
}

function textPattern(value: string): Pattern {
  if (value === WILDCARD) return { kind: 'any' };
  if (!value.includes(WILDCARD)) return { kind: 'literal', value };
  return { kind: 'text', parts: value.split(WILDCARD) };
}

// Whether a string matches text with … wildcards: the first part a prefix, the last a suffix, the others
// in order between them. Taking each middle part at its first place leaves the most room to the rest, so
// no other placement can succeed where this one fails.
export function textMatches(parts: string[], value: string): boolean {
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!value.startsWith(first) || value.length < first.length + last.length || !value.endsWith(last)) return false;
  let at = first.length;
  const end = value.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = value.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

// Where an answer differs from its expectation, and how.
export interface Mismatch {
  path: string;
  problem: string;
}

// null when `actual` has the expectation's shape; else the first place it does not, as a JSON path
// ($.items[0].name).
export function matchPattern(pattern: Pattern, actual: unknown, at = '$'): Mismatch | null {
  switch (pattern.kind) {
    case 'any':
      return null;
    case 'literal':
      return actual === pattern.value ? null : { path: at, problem: `expected ${JSON.stringify(pattern.value)}, got ${shown(actual)}` };
    case 'text':
      if (typeof actual === 'string' && textMatches(pattern.parts, actual)) return null;
      return { path: at, problem: `expected ${renderPattern(pattern)}, got ${shown(actual)}` };
    case 'object':
      return matchObject(pattern, actual, at);
    case 'array':
      return matchArray(pattern.items, actual, at);
  }
}

function matchObject(pattern: Extract<Pattern, { kind: 'object' }>, actual: unknown, at: string): Mismatch | null {
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual))
    return { path: at, problem: `expected an object, got ${shown(actual)}` };
  const record = actual as Record<string, unknown>;
  for (const [key, value] of pattern.members) {
    const where = memberPath(at, key);
    if (!Object.hasOwn(record, key)) return { path: where, problem: `missing (the object has ${describeKeys(Object.keys(record))})` };
    const mismatch = matchPattern(value, record[key], where);
    if (mismatch) return mismatch;
  }
  if (pattern.open) return null;
  const listed = new Set(pattern.members.map(([key]) => key));
  const extra = Object.keys(record).filter((key) => !listed.has(key));
  if (extra.length === 0) return null;
  return {
    path: at,
    problem: `members not in the expectation: ${extra.map((k) => JSON.stringify(k)).join(', ')} (a bare … among the members allows others)`,
  };
}

// The array against its element patterns, a rest marker taking any number of elements. Searches every
// placement of the rest markers; when none fits, reports the element pattern that got furthest.
function matchArray(items: Array<Pattern | { kind: 'rest' }>, actual: unknown, at: string): Mismatch | null {
  if (!Array.isArray(actual)) return { path: at, problem: `expected an array, got ${shown(actual)}` };
  const elements: unknown[] = actual;
  let furthest: { item: number; mismatch: Mismatch } | null = null;
  const note = (item: number, mismatch: Mismatch) => {
    // On a tie the later attempt: for `[…, x]` the last element is where x was wanted.
    if (furthest === null || item >= furthest.item) furthest = { item, mismatch };
  };
  const failed = new Set<string>();
  const fits = (item: number, element: number): boolean => {
    const key = `${item},${element}`;
    if (failed.has(key)) return false;
    let ok: boolean;
    if (item === items.length) {
      ok = element === elements.length;
      if (!ok)
        note(item, {
          path: `${at}[${element}]`,
          problem: `an element more than the expectation lists: ${shown(elements[element])} (a bare … element allows more)`,
        });
    } else {
      const expected = items[item];
      if (expected.kind === 'rest') {
        ok = false;
        for (let next = element; next <= elements.length && !ok; next++) ok = fits(item + 1, next);
      } else if (element >= elements.length) {
        ok = false;
        // Past the end after a rest marker: an element tried before says more than "missing".
        const triedBefore = items[item - 1]?.kind === 'rest' && (furthest as { item: number } | null)?.item === item;
        if (!triedBefore)
          note(item, {
            path: `${at}[${element}]`,
            problem: `missing: the array has ${elements.length} element${elements.length === 1 ? '' : 's'}, the expectation lists ${renderPattern(expected)} here`,
          });
      } else {
        const mismatch = matchPattern(expected, elements[element], `${at}[${element}]`);
        // After a rest marker the element was looked for among several: the one that came last is named.
        if (mismatch && items[item - 1]?.kind === 'rest') {
          note(item, {
            path: at,
            problem: `no element matches ${renderPattern(expected)} where the expectation has it; the last one tried differs at ${mismatch.path}: ${mismatch.problem}`,
          });
        } else if (mismatch) {
          note(item, mismatch);
        }
        ok = mismatch === null && fits(item + 1, element + 1);
      }
    }
    if (!ok) failed.add(key);
    return ok;
  };
  if (fits(0, 0)) return null;
  return (furthest as { mismatch: Mismatch } | null)?.mismatch ?? { path: at, problem: 'no element matches the expectation' };
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const memberPath = (at: string, key: string) => (IDENTIFIER.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`);
const describeKeys = (keys: string[]) => (keys.length === 0 ? 'no members' : `${keys.map((k) => JSON.stringify(k)).join(', ')}`);

// A value as the failure message shows it: JSON, cut at 200 characters.
function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value);
  const kind = Array.isArray(value) ? 'an array ' : value !== null && typeof value === 'object' ? 'an object ' : '';
  return `${kind}${json.length > 200 ? `${json.slice(0, 200)}…(cut)` : json}`;
}

// The pattern written back as the page has it.
export function renderPattern(pattern: Pattern | { kind: 'rest' }): string {
  switch (pattern.kind) {
    case 'any':
      return `"${WILDCARD}"`;
    case 'rest':
      return WILDCARD;
    case 'literal':
      return JSON.stringify(pattern.value);
    case 'text':
      return JSON.stringify(pattern.parts.join(WILDCARD));
    case 'object':
      return `{${[...pattern.members.map(([key, value]) => `${JSON.stringify(key)}:${renderPattern(value)}`), ...(pattern.open ? [WILDCARD] : [])].join(',')}}`;
    case 'array':
      return `[${pattern.items.map(renderPattern).join(',')}]`;
  }
}

// ---------------------------------------------------------------------------------------------------------
// A command's output against its expectation

// null when the stdout has the expected shape, else what differs (the path `$` is the whole answer;
// `status` and `header <name>` are curl -i's status line and headers).
export function judgeOutput(expectation: Expectation, stdout: string): Mismatch | null {
  if (expectation.kind === 'json') {
    const parsed = parseJson(stdout);
    if (!parsed.ok) return { path: '$', problem: `the output is not JSON (${parsed.error})` };
    return matchPattern(expectation.pattern, parsed.value);
  }
  const response = parseCurlResponse(stdout);
  if (response === null) return { path: 'status', problem: 'the output does not start with an HTTP status line (is it curl -i?)' };
  if (response.status !== expectation.status)
    return { path: 'status', problem: `expected ${expectation.status}, got ${response.status} (${response.statusLine})` };
  for (const header of expectation.headers) {
    const values = response.headers.filter(([name]) => name.toLowerCase() === header.name.toLowerCase()).map(([, value]) => value);
    if (values.length === 0)
      return {
        path: `header ${header.name}`,
        problem: `missing (the answer has ${response.headers.map(([n]) => n).join(', ') || 'no headers'})`,
      };
    const expected = textPattern(header.value);
    const matches = (value: string) =>
      expected.kind === 'any' ? true : expected.kind === 'text' ? textMatches(expected.parts, value) : value === header.value;
    if (!values.some(matches))
      return {
        path: `header ${header.name}`,
        problem: `expected ${JSON.stringify(header.value)}, got ${values.map((v) => JSON.stringify(v)).join(', ')}`,
      };
  }
  if (expectation.body === null) return null;
  const body = parseJson(response.body);
  if (!body.ok) return { path: '$', problem: `the body is not JSON (${body.error})` };
  return matchPattern(expectation.body.pattern, body.value);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: false, error: 'it is empty' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

// curl -i's output: status line, headers, a blank line, the body. Interim answers (100 Continue) and,
// with -L, the redirects before the last answer come first, each with its own header block.
export function parseCurlResponse(
  output: string,
): { status: number; statusLine: string; headers: Array<[string, string]>; body: string } | null {
  let rest = output;
  for (;;) {
    const end = /\r?\n\r?\n/.exec(rest);
    const head = end ? rest.slice(0, end.index) : rest;
    const body = end ? rest.slice(end.index + end[0].length) : '';
    const [statusLine, ...headerLines] = head.split(/\r?\n/);
    const status = STATUS_LINE.exec(statusLine.trim());
    if (!status) return null;
    if (/^HTTP\/\S+[ \t]+\d{3}/.test(body)) {
      rest = body;
      continue;
    }
    const headers = headerLines.flatMap((line): Array<[string, string]> => {
      const header = HEADER_LINE.exec(line);
      return header ? [[header[1], header[2].trim()]] : [];
    });
    return { status: Number(status[1]), statusLine: statusLine.trim(), headers, body };
  }
}

// ---------------------------------------------------------------------------------------------------------
// Running a page: one bash process, each command's stdout, stderr and exit status apart

export interface CommandRun {
  command: SessionCommand;
  // null: bash never finished the command (it stopped, or the page ran out of time there).
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export interface PageRun {
  runs: CommandRun[];
  timedOut: boolean;
  // bash's own exit status and what it wrote itself (a syntax error, say), outside every command.
  exitCode: number | null;
  stderr: string;
}

// Each command must be whole shell syntax on its own: a command spans lines only by ending them with `\`,
// so a quote or bracket left open at the end of a line would otherwise swallow the commands after it.
// bash -n reads without running. The first command that is not whole, with what bash said; else null.
export function incompleteCommand(commands: SessionCommand[]): { command: SessionCommand; problem: string } | null {
  for (const command of commands) {
    const check = spawnSync('bash', ['-n', '-c', command.text], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (check.status !== 0)
      return { command, problem: check.stderr.replace(/^bash: -c: /gm, '').trim() || `bash -n exited with status ${check.status}` };
  }
  return null;
}

// The script one page runs as: each command as written, in a brace group (the shell itself, not a
// subshell, so its variables, exports and `cd` last for the commands after it), its stdout and stderr
// to files of its own and its exit status after it. stdin is empty: no command waits for a terminal.
export function sessionScript(commands: SessionCommand[], outputDir: string): string {
  const file = (index: number, kind: string) => shellQuote(path.join(outputDir, `${index}.${kind}`));
  return commands
    .map(
      (command, index) =>
        `{\n${command.text}\n} >${file(index, 'out')} 2>${file(index, 'err')} </dev/null\necho $? >${file(index, 'rc')}\n`,
    )
    .join('');
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

// Runs a page's commands in one bash process in `cwd` with exactly `env`, and within `timeoutMs`; then
// ends whatever the page left running in the background (its process group).
export async function runSession(
  commands: SessionCommand[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<PageRun> {
  const outputDir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-session-'));
  try {
    const script = path.join(outputDir, 'session.sh');
    await writeFile(script, sessionScript(commands, outputDir));
    const child = spawn('bash', [script], { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    };
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => resolve(code));
    }).finally(() => clearTimeout(timer));
    // Something the page started in the background may still hold bash's stderr.
    killGroup();
    await closed;
    const read = async (index: number, kind: string) => {
      const file = path.join(outputDir, `${index}.${kind}`);
      return existsSync(file) ? readFile(file, 'utf8') : null;
    };
    const runs: CommandRun[] = [];
    for (const [index, command] of commands.entries()) {
      const rc = await read(index, 'rc');
      runs.push({
        command,
        exitCode: rc === null ? null : Number(rc.trim()),
        stdout: (await read(index, 'out')) ?? '',
        stderr: (await read(index, 'err')) ?? '',
      });
    }
    return { runs, timedOut, exitCode, stderr };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}

// What failed in a page's run, as the test reports it: the page, the line of the command and of its
// block, the command, what was expected and what came, and where they differ. null when all passed.
export function describeFailures(page: string, run: PageRun, timeoutMs: number): string | null {
  const failures: string[] = [];
  for (const { command, exitCode, stdout, stderr } of run.runs) {
    let problem: string | null = null;
    if (exitCode === null) {
      problem = run.timedOut
        ? `the page ran out of its ${timeoutMs / 1000} s while this command ran (or before it)`
        : `bash stopped before this command finished (bash exit status ${run.exitCode})${run.stderr.trim() ? `:\n${indent(run.stderr.trim())}` : ''}`;
    } else if (command.expectation) {
      const mismatch = judgeOutput(command.expectation, stdout);
      if (mismatch) {
        problem = [
          `expected (line ${command.expectation.line}):`,
          indent(expectationText(command.expectation)),
          'actual stdout:',
          indent(cut(stdout.replace(/\r\n/g, '\n').trimEnd(), 3000) || '(nothing)'),
          `differs at ${mismatch.path}: ${mismatch.problem}`,
        ].join('\n');
      }
    } else if (exitCode !== 0) {
      problem = `exited with status ${exitCode} (a command without an expectation must exit 0)${stdout.trim() ? `\nstdout:\n${indent(cut(stdout.trimEnd(), 2000))}` : ''}`;
    }
    if (problem === null) continue;
    const where = `${page}:${command.line} (session block at line ${command.blockLine})`;
    const said = stderr.trim() ? `\nstderr:\n${indent(cut(stderr.trimEnd(), 2000))}` : '';
    failures.push(`${where}\n$ ${command.text.replace(/\n/g, '\n  ')}\n${problem}${said}`);
  }
  if (failures.length === 0) return null;
  // Later commands of a page usually fail because an earlier one did: they are named, not described.
  const [first, ...later] = failures;
  const laterLines = later.map((failure) => failure.slice(0, failure.indexOf(' ')));
  return later.length === 0
    ? first
    : `${first}\n\n${later.length} later command${later.length === 1 ? '' : 's'} of the page failed too: ${laterLines.join(', ')}`;
}

function expectationText(expectation: Expectation): string {
  if (expectation.kind === 'json') return expectation.text;
  return [
    expectation.text,
    ...expectation.headers.map((h) => `${h.name}: ${h.value}`),
    ...(expectation.body ? [expectation.body.text] : []),
  ].join('\n');
}

const indent = (text: string) => text.replace(/^/gm, '    ');
const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}\n…(${text.length - max} more characters)` : text);
