import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expectNoProcess } from '../support/processes.js';
import {
  describeFailures,
  extractSessionBlocks,
  incompleteCommand,
  judgeOutput,
  matchPattern,
  parseCurlResponse,
  parsePattern,
  parseSessionBlock,
  parseSessionPage,
  runSession,
  SessionFormatError,
  type Expectation,
  type SessionCommand,
} from './doc-sessions.js';

const fence = '```';

// A page of the given lines (the block's own lines, fenced as a session).
const page = (...lines: string[]) => [`${fence}sh session`, ...lines, fence].join('\n');
const commandsOf = (...lines: string[]) => parseSessionPage(page(...lines));
const formatError = (markdown: string): SessionFormatError => {
  try {
    parseSessionPage(markdown);
  } catch (error) {
    if (error instanceof SessionFormatError) return error;
    throw error;
  }
  throw new Error('the page was accepted');
};

// Whether a value has the shape the expectation text describes; the mismatch when it has not.
const matches = (expectation: string, actual: unknown) => matchPattern(parsePattern(expectation), actual) === null;
const mismatch = (expectation: string, actual: unknown) => matchPattern(parsePattern(expectation), actual);

describe('doc sessions: the blocks of a page', () => {
  it('finds the blocks fenced as `sh session` with the line of their fence, and nothing else', () => {
    const markdown = [
      '# Page', // 1
      '', // 2
      `${fence}sh`, // 3
      'echo plain', // 4
      fence, // 5
      `${fence}sh session`, // 6
      'echo one', // 7
      fence, // 8
      `${fence}sh  session extra`, // 9
      'echo not a session', // 10
      fence, // 11
      '~~~sh session', // 12
      'echo two', // 13
      '~~~', // 14
    ].join('\n');

    expect(extractSessionBlocks(markdown)).toEqual([
      { line: 6, lines: [{ line: 7, text: 'echo one' }] },
      { line: 12, lines: [{ line: 13, text: 'echo two' }] },
    ]);
  });

  it('takes a fence indented up to three spaces (in a list), and strips that indentation from its lines', () => {
    const markdown = ['- a step:', '', `   ${fence}sh session`, '   echo indented', '     echo deeper', `   ${fence}`].join('\n');

    expect(extractSessionBlocks(markdown)).toEqual([
      {
        line: 3,
        lines: [
          { line: 4, text: 'echo indented' },
          { line: 5, text: '  echo deeper' },
        ],
      },
    ]);
  });

  it('does not take a session fence indented four spaces (an indented code block: an example of the format) or inside another fence', () => {
    const markdown = [
      'The format:',
      '',
      `    ${fence}sh session`,
      '    curl -s "$TOOLGATE_URL/v1/projects"',
      `    ${fence}`,
      '',
      '````markdown',
      `${fence}sh session`,
      'echo shown, not run',
      fence,
      '````',
    ].join('\n');

    expect(extractSessionBlocks(markdown)).toEqual([]);
  });

  it('a session block that is never closed is an error naming its line', () => {
    expect(formatError(['text', `${fence}sh session`, 'echo open'].join('\n'))).toMatchObject({
      line: 2,
      problem: 'the session block is never closed',
    });
  });
});

describe('doc sessions: commands and expectations', () => {
  it('reads commands, their continuation lines, prose comments and expectations with their continuation lines', () => {
    const commands = commandsOf(
      '# Create a project', // 2
      'curl -s -X POST "$TOOLGATE_URL/v1/projects" \\', // 3
      '  -d \'{"name":"Demo"}\'', // 4
      '# {"id":"…","name":"Demo",', // 5
      '#   "slug":"demo",…}', // 6
      'PROJECT=$(curl -s "$TOOLGATE_URL/v1/projects" | jq -r ".items[0].id")', // 7
      '', // 8
      '# prose: the next command shows nothing', // 9
      'echo "$PROJECT"', // 10
    );

    expect(commands.map(({ line, blockLine, text }) => ({ line, blockLine, text }))).toEqual([
      { line: 3, blockLine: 1, text: 'curl -s -X POST "$TOOLGATE_URL/v1/projects" \\\n  -d \'{"name":"Demo"}\'' },
      { line: 7, blockLine: 1, text: 'PROJECT=$(curl -s "$TOOLGATE_URL/v1/projects" | jq -r ".items[0].id")' },
      { line: 10, blockLine: 1, text: 'echo "$PROJECT"' },
    ]);
    expect(commands[0].expectation).toMatchObject({ kind: 'json', line: 5, text: '{"id":"…","name":"Demo","slug":"demo",…}' });
    expect(commands[1].expectation).toBeNull();
    expect(commands[2].expectation).toBeNull();
  });

  it('a line ends with a continuing backslash only when it is not itself escaped', () => {
    expect(commandsOf('echo a\\\\', 'echo b').map((c) => c.text)).toEqual(['echo a\\\\', 'echo b']);
    expect(commandsOf('echo a \\\\\\', '  b').map((c) => c.text)).toEqual(['echo a \\\\\\\n  b']);
  });

  it('an expectation may begin with [ and holds the JSON of every continuation line', () => {
    const [command] = commandsOf('jq -c .items', '# [{"a":1},', '#  {"b":2}]');

    expect(command.expectation).toMatchObject({ kind: 'json', text: '[{"a":1},{"b":2}]' });
    expect(matchPattern((command.expectation as Extract<Expectation, { kind: 'json' }>).pattern, [{ a: 1 }, { b: 2 }])).toBeNull();
  });

  it('reads a curl -i expectation: the status, header lines, then the body with its continuation lines', () => {
    const [command] = commandsOf(
      'curl -s -i "$TOOLGATE_URL/v1/projects"',
      '# HTTP/1.1 201 Created',
      '# Content-Type: application/json…',
      '# Idempotent-Replayed: true',
      '# {"id":"…",',
      '#  …}',
    );

    expect(command.expectation).toMatchObject({
      kind: 'http',
      line: 3,
      status: 201,
      headers: [
        { name: 'Content-Type', value: 'application/json…', line: 4 },
        { name: 'Idempotent-Replayed', value: 'true', line: 5 },
      ],
      body: { text: '{"id":"…",…}' },
    });
  });

  it('a curl -i expectation may have no headers and no body', () => {
    const [command] = commandsOf('curl -s -i "$TOOLGATE_URL/health"', '# HTTP/1.1 204 No Content');

    expect(command.expectation).toMatchObject({ kind: 'http', status: 204, headers: [], body: null });
  });

  it('a `#` line after an expectation that is not a continuation is prose, as are lines of `#` with other text', () => {
    const commands = commandsOf(
      'echo \'{"a":1}\'',
      '# {"a":1}',
      '# that was the answer',
      '#    {"indented": "prose"}',
      '#no space',
      'true',
    );

    expect(commands).toHaveLength(2);
    expect(commands[0].expectation).toMatchObject({ text: '{"a":1}' });
  });

  it('refuses an expectation after a blank line, after a prose line, a second expectation, and one that is not JSON', () => {
    expect(formatError(page('echo 1', '', '# {"a":1}'))).toMatchObject({
      line: 4,
      problem: expect.stringContaining('not directly after a command'),
    });
    expect(formatError(page('echo 1', '# what it says', '# [1]'))).toMatchObject({
      line: 4,
      problem: expect.stringContaining('not directly after a command'),
    });
    expect(formatError(page('# [1]'))).toMatchObject({ line: 2, problem: expect.stringContaining('not directly after a command') });
    expect(formatError(page('echo 1', '# {"a":1}', '# {"a":2}'))).toMatchObject({
      line: 4,
      problem: expect.stringContaining('a second expectation for the command at line 2'),
    });
    expect(formatError(page('curl -i x', '# HTTP/1.1 200 OK', '# {"a":1}', '# [2]'))).toMatchObject({
      line: 5,
      problem: expect.stringContaining('a second expectation'),
    });
    expect(formatError(page('echo 1', '# {"a":1,}'))).toMatchObject({
      line: 3,
      problem: expect.stringContaining('the expectation is not JSON'),
    });
    expect(formatError(page('echo 1', '# {"a":...}'))).toMatchObject({
      line: 3,
      problem: expect.stringContaining('three dots are not a wildcard; write … (U+2026)'),
    });
    expect(formatError(page('echo 1', '# HTTP/1.1 OK'))).toMatchObject({
      line: 3,
      problem: expect.stringContaining('a status line is written like HTTP/1.1 200 OK'),
    });
    expect(formatError(page('echo 1 \\'))).toMatchObject({ line: 2, problem: 'the command ends with a backslash at the end of the block' });
  });

  it('finds a command that is not whole shell syntax on its own lines (a quote left open instead of a trailing backslash)', () => {
    const split = commandsOf('echo fine', "jq -n '{a: 1,", "  b: 2}'");

    expect(incompleteCommand(split)).toMatchObject({
      command: { line: 3, text: "jq -n '{a: 1," },
      problem: expect.stringContaining('unexpected EOF'),
    });
    expect(incompleteCommand(commandsOf("jq -n '{a: 1, b: 2}' \\", '  | jq .a', 'X=$(echo 1)', 'if true; then echo y; fi'))).toBeNull();
  });

  it('parses each block on its own but gives the page its commands in order', () => {
    const markdown = [page('A=1'), 'Some prose.', page('echo $A', '# 1')].join('\n');

    expect(parseSessionPage(markdown).map((c) => [c.blockLine, c.line, c.text])).toEqual([
      [1, 2, 'A=1'],
      [5, 6, 'echo $A'],
    ]);
    // `# 1` does not start with {, [ or HTTP/: prose, and the command must then exit 0.
    expect(parseSessionBlock(extractSessionBlocks(markdown)[1])[0].expectation).toBeNull();
  });
});

describe('doc sessions: the … wildcards', () => {
  it('"…" matches any value of any type', () => {
    for (const value of ['text', '', 7, 0, true, false, null, { a: 1 }, [1, 2]]) expect(matches('"…"', value)).toBe(true);
    expect(matches('{"a":"…"}', { a: { deep: [1] } })).toBe(true);
    // A missing member is not a value.
    expect(mismatch('{"a":"…"}', {})).toEqual({ path: '$.a', problem: 'missing (the object has no members)' });
  });

  it('{…} matches any object and nothing else', () => {
    expect(matches('{…}', {})).toBe(true);
    expect(matches('{…}', { a: 1, b: [2] })).toBe(true);
    expect(mismatch('{…}', [1])).toEqual({ path: '$', problem: 'expected an object, got an array [1]' });
    expect(mismatch('{"p":{…}}', { p: 'x' })).toEqual({ path: '$.p', problem: 'expected an object, got "x"' });
    expect(mismatch('{…}', null)).toEqual({ path: '$', problem: 'expected an object, got null' });
  });

  it('[…] matches any array and nothing else', () => {
    expect(matches('[…]', [])).toBe(true);
    expect(matches('[…]', [1, 'two', { three: 3 }])).toBe(true);
    expect(mismatch('[…]', { 0: 1 })).toEqual({ path: '$', problem: 'expected an array, got an object {"0":1}' });
  });

  it('"abc…" a string starting with abc', () => {
    expect(matches('"abc…"', 'abc')).toBe(true);
    expect(matches('"abc…"', 'abcdef')).toBe(true);
    expect(mismatch('"abc…"', 'xabc')).toEqual({ path: '$', problem: 'expected "abc…", got "xabc"' });
    expect(mismatch('"abc…"', 5)).toEqual({ path: '$', problem: 'expected "abc…", got 5' });
  });

  it('"…abc" a string ending with abc', () => {
    expect(matches('"…abc"', 'abc')).toBe(true);
    expect(matches('"…abc"', 'xyzabc')).toBe(true);
    expect(mismatch('"…abc"', 'abcx')).toEqual({ path: '$', problem: 'expected "…abc", got "abcx"' });
  });

  it('"ab…yz" a string with both, which may not overlap', () => {
    expect(matches('"ab…yz"', 'abyz')).toBe(true);
    expect(matches('"ab…yz"', 'ab-middle-yz')).toBe(true);
    expect(matches('"ab…ba"', 'aba')).toBe(false);
    expect(mismatch('"ab…yz"', 'abcd')).toEqual({ path: '$', problem: 'expected "ab…yz", got "abcd"' });
  });

  it('several … in one string: the parts in order', () => {
    expect(
      matches(
        '"Showing lines 1-3 of …; call read_file again with offset: … to read on"',
        'Showing lines 1-3 of 198; call read_file again with offset: 4 to read on',
      ),
    ).toBe(true);
    expect(matches('"a…b…c"', 'a1b2c')).toBe(true);
    expect(matches('"a…b…c"', 'abc')).toBe(true);
    expect(matches('"…b…"', 'xbx')).toBe(true);
    expect(matches('"a…c…b"', 'a1b2c')).toBe(false);
    // The middle part may not reach into the suffix.
    expect(matches('"a…bc…c"', 'abc')).toBe(false);
    expect(matches('"……"', '')).toBe(true);
  });

  it('an object without a bare … has exactly the listed members, in any order', () => {
    expect(matches('{"b":2,"a":1}', { a: 1, b: 2 })).toBe(true);
    expect(mismatch('{"a":1}', { a: 1, b: 2, c: 3 })).toEqual({
      path: '$',
      problem: 'members not in the expectation: "b", "c" (a bare … among the members allows others)',
    });
    expect(mismatch('{"a":1,"b":2}', { a: 1 })).toEqual({ path: '$.b', problem: 'missing (the object has "a")' });
  });

  it('a bare … member allows members not listed, wherever it stands', () => {
    expect(matches('{"a":1,…}', { a: 1, b: 2 })).toBe(true);
    expect(matches('{…,"a":1}', { a: 1, b: 2 })).toBe(true);
    expect(matches('{"a":1,…,"c":3}', { c: 3, a: 1, b: 2 })).toBe(true);
    expect(mismatch('{"a":1,…}', { b: 2 })).toEqual({ path: '$.a', problem: 'missing (the object has "b")' });
    expect(mismatch('{"a":1,…}', { a: 2, b: 2 })).toEqual({ path: '$.a', problem: 'expected 1, got 2' });
  });

  it('an array without a bare … has exactly the listed elements, in order', () => {
    expect(matches('[1,"two",{"three":3}]', [1, 'two', { three: 3 }])).toBe(true);
    expect(mismatch('[1,2]', [2, 1])).toEqual({ path: '$[0]', problem: 'expected 1, got 2' });
    expect(mismatch('[1,2]', [1, 2, 3])).toEqual({
      path: '$[2]',
      problem: 'an element more than the expectation lists: 3 (a bare … element allows more)',
    });
    expect(mismatch('[1,2]', [1])).toEqual({ path: '$[1]', problem: 'missing: the array has 1 element, the expectation lists 2 here' });
    expect(mismatch('[]', [1])).toEqual({
      path: '$[0]',
      problem: 'an element more than the expectation lists: 1 (a bare … element allows more)',
    });
  });

  it('a bare … element allows further elements there: at the end, the start or between', () => {
    expect(matches('[1,…]', [1])).toBe(true);
    expect(matches('[1,…]', [1, 2, 3])).toBe(true);
    expect(matches('[…,3]', [1, 2, 3])).toBe(true);
    expect(matches('[1,…,3]', [1, 3])).toBe(true);
    expect(matches('[1,…,3]', [1, 2, 2, 3])).toBe(true);
    expect(matches('[…,"b",…]', ['a', 'b', 'c'])).toBe(true);
    // Where a later element could be taken too early, another placement is tried.
    expect(matches('[…,{"k":1},{"k":2}]', [{ k: 1 }, { k: 0 }, { k: 1 }, { k: 2 }])).toBe(true);
    expect(mismatch('[1,…]', [2, 1])).toEqual({ path: '$[0]', problem: 'expected 1, got 2' });
    expect(mismatch('[1,…]', [])).toEqual({ path: '$[0]', problem: 'missing: the array has 0 elements, the expectation lists 1 here' });
    expect(mismatch('[…,"z",…]', ['a', 'b'])).toEqual({
      path: '$',
      problem: 'no element matches "z" where the expectation has it; the last one tried differs at $[1]: expected "z", got "b"',
    });
    expect(mismatch('[…,3]', [3, 4])).toMatchObject({ path: '$[1]', problem: expect.stringContaining('an element more') });
  });

  it('"…" as an element is one element of any value, not a rest', () => {
    expect(matches('["…"]', [{ any: 1 }])).toBe(true);
    expect(matches('["…"]', [])).toBe(false);
    expect(matches('["…"]', [1, 2])).toBe(false);
  });

  it('a bare … as a member value matches any value, as "…" does', () => {
    expect(matches('{"total":…}', { total: 12 })).toBe(true);
    expect(matches('{"total":…}', { total: null })).toBe(true);
  });

  it('numbers, booleans, null and strings without … must be equal', () => {
    expect(matches('{"n":1.0,"t":true,"f":false,"z":null,"s":"a\\nb"}', { n: 1, t: true, f: false, z: null, s: 'a\nb' })).toBe(true);
    expect(mismatch('1', '1')).toEqual({ path: '$', problem: 'expected 1, got "1"' });
    expect(mismatch('true', 1)).toEqual({ path: '$', problem: 'expected true, got 1' });
    expect(mismatch('null', 'null')).toEqual({ path: '$', problem: 'expected null, got "null"' });
    expect(mismatch('"Demo"', 'demo')).toEqual({ path: '$', problem: 'expected "Demo", got "demo"' });
    expect(mismatch('-2.5e3', -2500)).toBeNull();
  });

  it('names the JSON path where the shape differs, with brackets for members that are not identifiers', () => {
    const expectation = '{"result":{"entries":[{"name":"a.md"},{"name":"b.md","meta":{"content-type":"text/plain"}}]},…}';
    const actual = { result: { entries: [{ name: 'a.md' }, { name: 'b.md', meta: { 'content-type': 'text/html' } }] }, durationMs: 3 };

    expect(mismatch(expectation, actual)).toEqual({
      path: '$.result.entries[1].meta["content-type"]',
      problem: 'expected "text/plain", got "text/html"',
    });
  });

  it('refuses text that is not JSON with wildcards, saying where', () => {
    expect(() => parsePattern('{"a":1} x')).toThrow("unexpected 'x' after the value");
    expect(() => parsePattern('{"a" 1}')).toThrow(`':' should follow the member name "a"`);
    expect(() => parsePattern('{"a":1,"a":2}')).toThrow('the member "a" is listed twice');
    expect(() => parsePattern('[1 2]')).toThrow("',' or ']' should be here");
    expect(() => parsePattern('{a:1}')).toThrow('a member name (a "string") or … should be here');
    expect(() => parsePattern('"open')).toThrow('a string that is not closed');
    expect(() => parsePattern('{"a":')).toThrow('the text ends where a value should be');
  });
});

describe('doc sessions: an output against its expectation', () => {
  const expectationOf = (...lines: string[]) => commandsOf('true', ...lines)[0].expectation!;

  it('a JSON expectation parses the whole stdout (surrounding whitespace and newlines allowed)', () => {
    const expectation = expectationOf('# {"a":[1,…]}');

    expect(judgeOutput(expectation, '{\n  "a": [1, 2]\n}\n')).toBeNull();
    expect(judgeOutput(expectation, '{"a":[2]}')).toEqual({ path: '$.a[0]', problem: 'expected 1, got 2' });
    expect(judgeOutput(expectation, '')).toEqual({ path: '$', problem: 'the output is not JSON (it is empty)' });
    expect(judgeOutput(expectation, 'curl: (7) Failed to connect')).toMatchObject({
      path: '$',
      problem: expect.stringContaining('the output is not JSON'),
    });
  });

  const response = (status: string, headers: string[], body: string) => [status, ...headers, '', body].join('\r\n');

  it('curl -i: compares the status code, not the reason text', () => {
    const expectation = expectationOf('# HTTP/1.1 200 OK');

    expect(judgeOutput(expectation, response('HTTP/1.1 200 Whatever', [], ''))).toBeNull();
    expect(judgeOutput(expectation, response('HTTP/1.1 422 Unprocessable Entity', [], '{}'))).toEqual({
      path: 'status',
      problem: 'expected 200, got 422 (HTTP/1.1 422 Unprocessable Entity)',
    });
    expect(judgeOutput(expectation, '{"a":1}')).toEqual({
      path: 'status',
      problem: 'the output does not start with an HTTP status line (is it curl -i?)',
    });
  });

  it('curl -i: header names are matched without case, values with … wildcards; other headers are allowed', () => {
    const expectation = expectationOf(
      '# HTTP/1.1 200 OK',
      '# content-type: application/json…',
      '# X-Request-Id: …',
      '# Idempotent-Replayed: true',
    );
    const headers = ['Content-Type: application/json; charset=utf-8', 'x-request-id: 4f2a', 'Idempotent-Replayed: true', 'Date: today'];

    expect(judgeOutput(expectation, response('HTTP/1.1 200 OK', headers, '{}'))).toBeNull();
    expect(judgeOutput(expectation, response('HTTP/1.1 200 OK', headers.slice(0, 2), '{}'))).toEqual({
      path: 'header Idempotent-Replayed',
      problem: 'missing (the answer has Content-Type, x-request-id)',
    });
    expect(judgeOutput(expectation, response('HTTP/1.1 200 OK', ['Content-Type: text/plain', ...headers.slice(1)], '{}'))).toEqual({
      path: 'header content-type',
      problem: 'expected "application/json…", got "text/plain"',
    });
  });

  it('curl -i: the body is compared by shape, after interim answers', () => {
    const expectation = expectationOf('# HTTP/1.1 201 Created', '# {"id":"…","name":"Demo"}');
    const answer = response('HTTP/1.1 201 Created', ['Content-Type: application/json'], '{"id":"p1","name":"Demo"}');

    expect(judgeOutput(expectation, answer)).toBeNull();
    expect(judgeOutput(expectation, `HTTP/1.1 100 Continue\r\n\r\n${answer}`)).toBeNull();
    expect(judgeOutput(expectation, answer.replace('Demo', 'Other'))).toEqual({ path: '$.name', problem: 'expected "Demo", got "Other"' });
    expect(judgeOutput(expectation, response('HTTP/1.1 201 Created', [], ''))).toEqual({
      path: '$',
      problem: 'the body is not JSON (it is empty)',
    });
  });

  it('reads curl -i output with LF line ends too', () => {
    expect(parseCurlResponse('HTTP/1.1 404 Not Found\ncontent-type: application/json\n\n{"error":{}}')).toEqual({
      status: 404,
      statusLine: 'HTTP/1.1 404 Not Found',
      headers: [['content-type', 'application/json']],
      body: '{"error":{}}',
    });
  });
});

describe('doc sessions: running a page in one bash process', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await mkdtemp(path.join(os.tmpdir(), 'toolgate-session-spec-'));
  });
  afterAll(async () => {
    await rm(cwd, { recursive: true, force: true });
  });
  const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GREETING: 'hello' });
  const run = (commands: SessionCommand[], timeoutMs = 10_000) => runSession(commands, { cwd, env: env(), timeoutMs });

  it('keeps variables, exports and the directory from command to command and block to block; each stdout and exit status apart', async () => {
    const markdown = [
      page('NAME=world', 'export LATER=set', 'mkdir -p sub && cd sub', 'echo "{\\"name\\":\\"$NAME\\"}"', '# {"name":"world"}'),
      page(
        'printf \'{"dir":"%s","later":"%s","greeting":"%s"}\' "$(basename "$PWD")" "$(sh -c \'echo $LATER\')" "$GREETING"',
        '# {"dir":"sub","later":"set","greeting":"hello"}',
        'false',
        'echo after',
      ),
    ].join('\n\nprose\n\n');
    const commands = parseSessionPage(markdown);
    const result = await run(commands);

    expect(result.runs.map(({ exitCode, stdout }) => ({ exitCode, stdout }))).toEqual([
      { exitCode: 0, stdout: '' },
      { exitCode: 0, stdout: '' },
      { exitCode: 0, stdout: '' },
      { exitCode: 0, stdout: '{"name":"world"}\n' },
      { exitCode: 0, stdout: '{"dir":"sub","later":"set","greeting":"hello"}' },
      { exitCode: 1, stdout: '' },
      { exitCode: 0, stdout: 'after\n' },
    ]);
    expect(describeFailures('page.md', result, 10_000)).toBe(
      ['page.md:14 (session block at line 11)', '$ false', 'exited with status 1 (a command without an expectation must exit 0)'].join(
        '\n',
      ),
    );
  });

  it('reports the first failure in full, with its expectation, the output and where it differs, and names the later ones', async () => {
    const commands = commandsOf(
      'echo \'{"items":[{"name":"a"},{"name":"b"}]}\'', // 2
      '# {"items":[{"name":"a"},{"name":"c"}]}', // 3
      'echo oops >&2; exit_status() { return 3; }; exit_status', // 4
    );
    const failure = describeFailures('docs/page.md', await run(commands), 10_000);

    expect(failure).toBe(
      [
        'docs/page.md:2 (session block at line 1)',
        `$ echo '{"items":[{"name":"a"},{"name":"b"}]}'`,
        'expected (line 3):',
        '    {"items":[{"name":"a"},{"name":"c"}]}',
        'actual stdout:',
        '    {"items":[{"name":"a"},{"name":"b"}]}',
        'differs at $.items[1].name: expected "c", got "b"',
        '',
        '1 later command of the page failed too: docs/page.md:4',
      ].join('\n'),
    );
  });

  it('a command with an expectation is judged by its stdout alone; stderr is shown when it fails', async () => {
    const result = await run(commandsOf('echo \'{"a":1}\'; echo warning >&2; false', '# {"a":2}'));

    expect(result.runs[0]).toMatchObject({ exitCode: 1, stdout: '{"a":1}\n', stderr: 'warning\n' });
    expect(describeFailures('p.md', result, 10_000)).toContain('differs at $.a: expected 2, got 1\nstderr:\n    warning');
    expect(describeFailures('p.md', await run(commandsOf('echo \'{"a":2}\'; false', '# {"a":2}')), 10_000)).toBeNull();
  });

  it('a command reads no stdin, and a syntax error stops bash: the commands it never finished say so', async () => {
    const result = await run(commandsOf('cat', 'echo "unclosed', 'echo never'));

    expect(result.runs.map((r) => r.exitCode)).toEqual([0, null, null]);
    expect(describeFailures('p.md', result, 10_000)).toMatch(
      /^p\.md:3 \(session block at line 1\)\n\$ echo "unclosed\nbash stopped before this command finished \(bash exit status 2\):\n {4}.*unexpected EOF/,
    );
  });

  it('a page past its time is stopped, with what it left in the background', async () => {
    const marker = `sleep 30.${process.pid}`;
    const started = Date.now();
    const result = await run(commandsOf(`${marker} &`, 'echo started', 'sleep 20'), 1000);

    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.timedOut).toBe(true);
    expect(result.runs.map((r) => r.exitCode)).toEqual([0, 0, null]);
    expect(describeFailures('p.md', result, 1000)).toContain(
      'p.md:4 (session block at line 1)\n$ sleep 20\nthe page ran out of its 1 s while this command ran (or before it)',
    );
    await expectNoProcess(`30.${process.pid}`);
  });
});
