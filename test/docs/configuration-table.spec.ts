// Every setting documented: the names in the first column of the configuration page's tables are exactly
// the environment variables the service reads. Those are what loadConfig reads (recorded while it runs,
// and every name its calls pass as a literal) and every `process.env` read anywhere under src/.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';

const PAGE = 'docs/operating/configuration.md';
const LOAD_CONFIG = 'src/config/load-config.ts';

// Read by the code but not an operator's setting, so not in the table.
const NOT_SETTINGS: Record<string, string> = {
  NODE_CHANNEL_FD: 'Node sets it in a process started with an IPC channel; src/main.ts keeps that descriptor open',
};

// The OpenTelemetry SDK reads the standard OTEL_* variables itself (src/tracing/start-tracing.ts), so the
// page may list more of them than the service's own code reads.
const readByLibraries = (name: string) => name.startsWith('OTEL_');

const VARIABLE = /^[A-Z][A-Z0-9_]*$/;

// name -> where it is read (file, or file:line)
type Reads = Map<string, Set<string>>;

function note(reads: Reads, name: string, where: string): void {
  if (!reads.has(name)) reads.set(name, new Set());
  reads.get(name)!.add(where);
}

// What loadConfig reads, recorded on environments that take its branches: empty, production (which reads
// OAUTH_CLIENT_METADATA_* again to refuse them) and one with the variables whose presence leads to more
// reads. A proxy sees every name it asks for, however the code spells it.
function recordLoadConfig(reads: Reads): void {
  const environments: Array<Record<string, string>> = [
    {},
    { NODE_ENV: 'production', OAUTH_CLIENT_METADATA_ALLOW_HOSTS: 'a:1', OAUTH_CLIENT_METADATA_CA_FILE: '/ca.pem' },
    {
      METRICS_PORT: '0',
      OAUTH_ISSUER: 'https://issuer.example.com',
      DATABASE_URL: 'pglite://memory',
      SECRETS_KEY: Buffer.alloc(32).toString('base64'),
    },
  ];
  for (const values of environments) {
    const env = new Proxy(values, {
      get: (target, name) => {
        if (typeof name === 'string') note(reads, name, LOAD_CONFIG);
        return Reflect.get(target, name);
      },
      has: (target, name) => {
        if (typeof name === 'string') note(reads, name, LOAD_CONFIG);
        return Reflect.has(target, name);
      },
      getOwnPropertyDescriptor: (target, name) => {
        if (typeof name === 'string') note(reads, name, LOAD_CONFIG);
        return Reflect.getOwnPropertyDescriptor(target, name);
      },
      ownKeys: () => {
        throw new Error('loadConfig lists the environment: the names it reads can no longer be told from the code; extend this test');
      },
    });
    try {
      loadConfig(env, '/srv/toolgate');
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
    }
  }
}

// The source files of the service: src/ without the specs and the generated Prisma client.
function serviceSources(dir = 'src'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : serviceSources(file);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

const isProcessEnv = (node: ts.Node): node is ts.PropertyAccessExpression =>
  ts.isPropertyAccessExpression(node) && node.name.text === 'env' && ts.isIdentifier(node.expression) && node.expression.text === 'process';

// Every read of process.env in a file: `process.env.X`, `process.env['X']`, `const { X } = process.env`.
// Writes and deletes are not reads. Anything else (process.env handed on whole, or indexed by a name only
// known at run time) is returned as a problem, except in load-config.ts, whose reads are recorded as it
// runs; for a literal name handed to a call there, see literalNamesOf.
function processEnvReads(file: string, text: string): { reads: Array<{ name: string; line: number }>; problems: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const reads: Array<{ name: string; line: number }> = [];
  const problems: string[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const isWritten = (access: ts.Node) => {
    const parent = access.parent;
    return (
      ts.isDeleteExpression(parent) ||
      (ts.isBinaryExpression(parent) && parent.left === access && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken)
    );
  };
  const visit = (node: ts.Node): void => {
    if (isProcessEnv(node)) {
      const parent = node.parent;
      if (ts.isPropertyAccessExpression(parent) && parent.expression === node) {
        if (!isWritten(parent)) reads.push({ name: parent.name.text, line: lineOf(parent) });
      } else if (ts.isElementAccessExpression(parent) && parent.expression === node) {
        if (isWritten(parent)) {
          // An assignment or a delete: not a read.
        } else if (ts.isStringLiteralLike(parent.argumentExpression)) {
          reads.push({ name: parent.argumentExpression.text, line: lineOf(parent) });
        } else {
          problems.push(
            `${file}:${lineOf(parent)} reads process.env[${parent.argumentExpression.getText(source)}], a name this test cannot see`,
          );
        }
      } else if (ts.isVariableDeclaration(parent) && parent.initializer === node && ts.isObjectBindingPattern(parent.name)) {
        for (const element of parent.name.elements) {
          const key = element.propertyName ?? element.name;
          if (ts.isIdentifier(key) || ts.isStringLiteralLike(key)) reads.push({ name: key.text, line: lineOf(element) });
          else problems.push(`${file}:${lineOf(element)} takes a computed name from process.env, which this test cannot see`);
        }
      } else if (file !== LOAD_CONFIG) {
        problems.push(
          `${file}:${lineOf(node)} hands process.env on whole; its reads cannot be told from here (read the variable in loadConfig instead)`,
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { reads, problems };
}

// The names load-config.ts passes as a literal first argument (read.integer('PORT', …), url('PUBLIC_URL')):
// reads that only happen when another variable is set are found here even if no recorded run took them.
function literalNamesOf(text: string): string[] {
  const source = ts.createSourceFile(LOAD_CONFIG, text, ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const first = node.arguments[0];
      if (first && ts.isStringLiteral(first) && VARIABLE.test(first.text)) names.push(first.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

// The names in the first column of every table of a markdown page (in backticks, several to a cell), with
// their lines. A `|` escaped as `\|` stays in its cell.
function tableNames(markdown: string): Array<{ name: string; line: number }> {
  const names: Array<{ name: string; line: number }> = [];
  markdown.split(/\r?\n/).forEach((text, index) => {
    if (!/^\s*\|/.test(text) || /^\s*\|[\s|:-]*$/.test(text)) return;
    const firstCell = text.replace(/^\s*\|/, '').split(/(?<!\\)\|/)[0];
    for (const match of firstCell.matchAll(/`([^`]+)`/g)) if (VARIABLE.test(match[1])) names.push({ name: match[1], line: index + 1 });
  });
  return names;
}

// The variables the service reads, each with where; and what kept some from being seen.
function variablesTheServiceReads(): { reads: Reads; problems: string[] } {
  const reads: Reads = new Map();
  const problems: string[] = [];
  recordLoadConfig(reads);
  for (const name of literalNamesOf(readFileSync(LOAD_CONFIG, 'utf8'))) note(reads, name, LOAD_CONFIG);
  for (const file of serviceSources()) {
    const found = processEnvReads(file, readFileSync(file, 'utf8'));
    for (const { name, line } of found.reads) note(reads, name, `${file}:${line}`);
    problems.push(...found.problems);
  }
  // The proxy also saw what the language asks of any object (Symbol-less names such as `then`, `toJSON`).
  for (const name of reads.keys()) if (!VARIABLE.test(name)) reads.delete(name);
  return { reads, problems };
}

// What the table lacks and what it has too many of, or null when they are the same list.
function compareNames(read: Reads, documented: Array<{ name: string; line: number }>): string | null {
  const inTable = new Set(documented.map((d) => d.name));
  const missing = [...read.keys()].filter((name) => !inTable.has(name) && !(name in NOT_SETTINGS)).sort();
  const extra = documented.filter(({ name }) => !read.has(name) && !readByLibraries(name));
  const duplicated = documented.filter(({ name }, index) => documented.findIndex((d) => d.name === name) !== index);
  if (missing.length === 0 && extra.length === 0 && duplicated.length === 0) return null;
  const lines: string[] = [];
  if (missing.length > 0) {
    lines.push(`Read by the service but not in the first column of a table of ${PAGE} (${missing.length}):`);
    for (const name of missing) lines.push(`  ${name}  (${[...read.get(name)!].join(', ')})`);
  }
  if (extra.length > 0) {
    lines.push(`In the table but read nowhere in src/ (${extra.length}):`);
    for (const { name, line } of extra) lines.push(`  ${name}  (${PAGE}:${line})`);
  }
  if (duplicated.length > 0) {
    lines.push(`In the table twice:`);
    for (const { name, line } of duplicated) lines.push(`  ${name}  (${PAGE}:${line})`);
  }
  return lines.join('\n');
}

describe('the configuration table', () => {
  it(`lists in ${PAGE} every environment variable the service reads, and nothing else`, () => {
    if (!existsSync(PAGE))
      throw new Error(
        `${PAGE} is missing: it holds the table of every environment variable the service reads, which this test compares with the code`,
      );
    const { reads, problems } = variablesTheServiceReads();
    expect(problems).toEqual([]);
    const difference = compareNames(reads, tableNames(readFileSync(PAGE, 'utf8')));
    if (difference !== null) throw new Error(difference);
  });

  it('the service starts as node dist/main.js, with no script before it that could read variables of its own', () => {
    const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts.start;
    const dockerCommand = /^CMD (\[.*\])$/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1];

    expect(start).toMatch(/^node (--[a-z-]+(=\S+)? )*dist\/main\.js$/);
    expect((JSON.parse(dockerCommand ?? '[]') as string[]).filter((arg) => !arg.startsWith('--'))).toEqual(['node', 'dist/main.js']);
  });

  it('finds the reads of process.env however they are written, and says which it cannot see', () => {
    const text = [
      'const a = process.env.ALPHA?.trim();', // 1
      "const b = process.env['BETA'];", // 2
      'const { GAMMA, DELTA: renamed, EPSILON = "x" } = process.env;', // 3
      'process.env.WRITTEN = "1";', // 4
      'process.env[NAME] = "1";', // 5
      'delete process.env[NAME];', // 6
      'const c = process.env[NAME];', // 7
      'start(process.env);', // 8
      '// process.env.IN_A_COMMENT', // 9
      'const d = "process.env.IN_A_STRING";', // 10
    ].join('\n');

    expect(processEnvReads('src/x.ts', text)).toEqual({
      reads: [
        { name: 'ALPHA', line: 1 },
        { name: 'BETA', line: 2 },
        { name: 'GAMMA', line: 3 },
        { name: 'DELTA', line: 3 },
        { name: 'EPSILON', line: 3 },
      ],
      problems: [
        'src/x.ts:7 reads process.env[NAME], a name this test cannot see',
        'src/x.ts:8 hands process.env on whole; its reads cannot be told from here (read the variable in loadConfig instead)',
      ],
    });
  });

  it('takes the backticked names of the first column of every table, not of the other columns or the header', () => {
    const markdown = [
      '# Configuration', // 1
      '', // 2
      '| Variable | Default | Meaning |', // 3
      '| --- | --- | --- |', // 4
      '| `PORT` | `3000` | the port; see `HOST` |', // 5
      '| `RATE_LIMIT_REQUESTS`, `RATE_LIMIT_COMMAND_CALLS` | `1200`, `120` | per minute |', // 6
      '| `OTEL_TRACES_EXPORTER` | `none` | `otlp\\|console` |', // 7
      '| `a\\|b` `LOG_FORMAT` | | |', // 8
      '', // 9
      'Text with `NOT_A_ROW`.', // 10
      '', // 11
      '|Name|Meaning|', // 12
      '|:-|-:|', // 13
      '|`SECOND_TABLE`|yes|', // 14
    ].join('\n');

    expect(tableNames(markdown)).toEqual([
      { name: 'PORT', line: 5 },
      { name: 'RATE_LIMIT_REQUESTS', line: 6 },
      { name: 'RATE_LIMIT_COMMAND_CALLS', line: 6 },
      { name: 'OTEL_TRACES_EXPORTER', line: 7 },
      { name: 'LOG_FORMAT', line: 8 },
      { name: 'SECOND_TABLE', line: 14 },
    ]);
  });

  it('names what the table lacks with where the code reads it, and what it lists that nothing reads', () => {
    const reads: Reads = new Map([
      ['PORT', new Set([LOAD_CONFIG])],
      ['HOST', new Set([LOAD_CONFIG])],
      ['NODE_CHANNEL_FD', new Set(['src/main.ts:15'])],
      ['OTEL_SERVICE_NAME', new Set(['src/tracing/start-tracing.ts:18'])],
    ]);
    const documented = [
      { name: 'PORT', line: 5 },
      { name: 'OTEL_SERVICE_NAME', line: 6 },
      { name: 'OTEL_EXPORTER_OTLP_HEADERS', line: 7 },
      { name: 'SHELL_USER', line: 8 },
      { name: 'PORT', line: 9 },
    ];

    expect(compareNames(reads, documented)).toBe(
      [
        `Read by the service but not in the first column of a table of ${PAGE} (1):`,
        `  HOST  (${LOAD_CONFIG})`,
        'In the table but read nowhere in src/ (1):',
        `  SHELL_USER  (${PAGE}:8)`,
        'In the table twice:',
        `  PORT  (${PAGE}:9)`,
      ].join('\n'),
    );
    expect(compareNames(reads, documented.filter((d) => d.line !== 8 && d.line !== 9).concat({ name: 'HOST', line: 10 }))).toBeNull();
  });
});
