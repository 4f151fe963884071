import { AppError } from '../../common/errors/app-error.js';
import { createToolAjv } from './ajv-factory.js';
import type { JsonSchema } from './schema-type.js';
import { compileToolValidator } from './tool-validator.js';
import { usageLine, type ToolArgumentIssue } from './validation-message.js';

const readFileSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['path'],
  properties: {
    path: { type: 'string', minLength: 1 },
    offset: { type: 'integer', minimum: 0 },
    limit: { type: 'integer', minimum: 1, maximum: 10_000 },
  },
};

const shellSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['argv'],
  properties: {
    argv: { type: 'array', items: { type: 'string', maxLength: 20 }, minItems: 1, maxItems: 3 },
    cwd: { type: 'string' },
    env: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

const kitchenSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    mode: { type: 'string', enum: ['a', 'b', 'c'] },
    url: { type: 'string', format: 'uri' },
    when: { type: 'string', format: 'date-time' },
    name: { type: 'string', pattern: '^[a-z]+$' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    options: {
      type: 'object',
      additionalProperties: false,
      required: ['depth'],
      properties: { depth: { type: 'integer' }, verbose: { type: 'boolean' } },
    },
    tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
    id: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    target: {
      oneOf: [
        {
          type: 'object',
          properties: { kind: { const: 'file' }, path: { type: 'string' } },
          required: ['kind', 'path'],
        },
        {
          type: 'object',
          properties: { kind: { const: 'url' }, href: { type: 'string' } },
          required: ['kind', 'href'],
        },
      ],
    },
    ratio: { type: 'number', exclusiveMinimum: 0, multipleOf: 0.5 },
  },
};

const ajv = createToolAjv();
const validators = new Map<JsonSchema, ReturnType<typeof compileToolValidator>>();

function refusal(name: string, schema: JsonSchema, args: Record<string, unknown>): AppError {
  let validator = validators.get(schema);
  if (!validator) {
    validator = compileToolValidator(ajv, name, schema);
    validators.set(schema, validator);
  }
  try {
    validator.validate(args);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('the arguments were accepted');
}

const issuesOf = (error: AppError) => (error.extra as { issues: ToolArgumentIssue[] }).issues;
const readFile = (args: Record<string, unknown>) => refusal('read_file', readFileSchema, args);
const shell = (args: Record<string, unknown>) => refusal('shell_exec', shellSchema, args);
const kitchen = (args: Record<string, unknown>) => refusal('kitchen', kitchenSchema, args);

describe('usageLine', () => {
  it('renders read_file with required parameters plain and optional ones with ?', () => {
    expect(usageLine('read_file', readFileSchema)).toBe('read_file(path: string, offset?: integer, limit?: integer)');
  });

  it('renders shell_exec with an array of strings and an object', () => {
    expect(usageLine('shell_exec', shellSchema)).toBe('shell_exec(argv: string[], cwd?: string, env?: object)');
  });

  it('renders enums, unions, nested arrays, tuples, consts and local $refs compactly, in declaration order', () => {
    const schema: JsonSchema = {
      type: 'object',
      required: ['z'],
      $defs: { level: { type: 'string', enum: ['low', 'high'] } },
      properties: {
        mode: { enum: ['a', 'b'] },
        id: { type: ['string', 'number'] },
        nullable: { type: ['string', 'null'] },
        grid: { type: 'array', items: { type: 'array', items: { type: 'integer' } } },
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'boolean' }] },
        picks: { type: 'array', items: { enum: ['x', 'y'] } },
        kind: { const: 'fixed' },
        level: { $ref: '#/$defs/level' },
        either: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
        anything: {},
        z: { type: 'boolean' },
      },
    };
    expect(usageLine('t', schema)).toBe(
      "t(mode?: 'a'|'b', id?: string|number, nullable?: string|null, grid?: integer[][], " +
        "pair?: [string, boolean], picks?: ('x'|'y')[], kind?: 'fixed', level?: 'low'|'high', " +
        'either?: string|string[], anything?: any, z: boolean)',
    );
  });

  it('renders a tool without parameters as name()', () => {
    expect(usageLine('now', { type: 'object' })).toBe('now()');
  });
});

describe('invalid_arguments messages', () => {
  it('names a missing required parameter', () => {
    const error = readFile({});
    expect(error.message).toBe(
      'Invalid arguments for read_file: missing required parameter: path. ' +
        'Usage: read_file(path: string, offset?: integer, limit?: integer)',
    );
    expect(issuesOf(error)).toEqual([
      { path: '/path', keyword: 'required', message: 'missing required parameter: path', expected: 'string' },
    ]);
  });

  it('names a parameter of the wrong type with the type received', () => {
    const error = readFile({ path: 5 });
    expect(error.message).toContain('/path must be string, got number');
    expect(issuesOf(error)).toEqual([
      {
        path: '/path',
        keyword: 'type',
        message: '/path must be string, got number',
        expected: 'string',
        received: '5',
      },
    ]);
  });

  it('shows the value when a number was sent quoted or a fraction was sent for an integer', () => {
    expect(readFile({ path: 'a', offset: '5' }).message).toContain("/offset must be integer, got string '5'");
    expect(readFile({ path: 'a', offset: 1.5 }).message).toContain('/offset must be integer, got number 1.5');
  });

  it('suggests the closest parameter for an unknown one', () => {
    const error = readFile({ pth: 'README.md' });
    expect(error.message).toContain("unknown parameter: pth; did you mean 'path'?");
    expect(issuesOf(error)).toContainEqual({
      path: '/pth',
      keyword: 'additionalProperties',
      message: "unknown parameter: pth; did you mean 'path'?",
      received: '"README.md"',
    });
  });

  it('names an unknown parameter with nothing close without inventing a suggestion', () => {
    const error = readFile({ path: 'a', extra: 1 });
    expect(error.message).toBe(
      'Invalid arguments for read_file: unknown parameter: extra. ' + 'Usage: read_file(path: string, offset?: integer, limit?: integer)',
    );
  });

  it('lists the allowed names for an unknown property of a nested object', () => {
    expect(kitchen({ options: { depth: 1, verbos: true } }).message).toContain(
      "unknown property: /options/verbos; did you mean 'verbose'?",
    );
    expect(kitchen({ options: { depth: 1, zzz: true } }).message).toContain('unknown property: /options/zzz (allowed: depth, verbose)');
  });

  it('lists the allowed values of an enum', () => {
    const error = kitchen({ mode: 'd' });
    expect(error.message).toContain("/mode must be one of 'a', 'b', 'c', got 'd'");
    expect(issuesOf(error)[0]).toMatchObject({
      path: '/mode',
      keyword: 'enum',
      expected: "'a'|'b'|'c'",
      received: '"d"',
    });
  });

  it('names the format a string must have', () => {
    const error = kitchen({ url: 'not a url' });
    expect(error.message).toContain("/url must be a valid uri, got 'not a url'");
    expect(issuesOf(error)[0]).toMatchObject({ keyword: 'format', expected: 'uri', received: '"not a url"' });
    expect(kitchen({ when: 'yesterday' }).message).toContain(
      "/when must be a valid date-time (e.g. 2025-01-31T09:30:00Z), got 'yesterday'",
    );
  });

  it('points at a nested array item and a nested object key with JSON pointers', () => {
    expect(shell({ argv: ['ls', 3] }).message).toContain('/argv/1 must be string, got number');
    expect(shell({ argv: ['ls'], env: { 'X-Foo': 1 } }).message).toContain('/env/X-Foo must be string, got number');
    expect(issuesOf(shell({ argv: ['ls'], env: { 'a/b~c': 1 } }))[0].path).toBe('/env/a~1b~0c');
  });

  it('puts limits in plain words', () => {
    expect(readFile({ path: '' }).message).toContain("/path must be at least 1 character long, got ''");
    expect(readFile({ path: 'a', offset: -1 }).message).toContain('/offset must be >= 0, got -1');
    expect(readFile({ path: 'a', limit: 20_000 }).message).toContain('/limit must be <= 10000, got 20000');
    expect(shell({ argv: [] }).message).toContain('/argv must have at least 1 item, got 0');
    expect(shell({ argv: ['a', 'b', 'c', 'd'] }).message).toContain('/argv must have at most 3 items, got 4');
    expect(shell({ argv: ['x'.repeat(25)] }).message).toContain('/argv/0 must be at most 20 characters long, got 25 characters');
    expect(kitchen({ ratio: 0 }).message).toContain('/ratio must be > 0, got 0');
    expect(kitchen({ ratio: 0.3 }).message).toContain('/ratio must be a multiple of 0.5, got 0.3');
    expect(kitchen({ name: 'ABC' }).message).toContain("/name must match the pattern ^[a-z]+$, got 'ABC'");
    expect(kitchen({ tags: ['x', 'y', 'x'] }).message).toContain('/tags must not contain duplicates (items 0 and 2 are identical)');
  });

  it('names every failing parameter at once, in declaration order, and ends with the usage line', () => {
    const error = readFile({ extra: true, limit: 0, offset: 'x' });
    expect(error.message).toBe(
      'Invalid arguments for read_file: missing required parameter: path; ' +
        "/offset must be integer, got string 'x'; /limit must be >= 1, got 0; unknown parameter: extra. " +
        'Usage: read_file(path: string, offset?: integer, limit?: integer)',
    );
    expect(issuesOf(error).map((issue) => issue.path)).toEqual(['/path', '/offset', '/limit', '/extra']);
    expect(error.extra).toMatchObject({
      tool: 'read_file',
      usage: 'read_file(path: string, offset?: integer, limit?: integer)',
    });
  });

  it('reports a nested missing property by its path', () => {
    expect(kitchen({ options: {} }).message).toContain('missing required property: /options/depth');
  });

  it('summarizes an anyOf cascade as one issue', () => {
    const error = kitchen({ id: true });
    expect(issuesOf(error)).toEqual([
      {
        path: '/id',
        keyword: 'anyOf',
        message: '/id must be string|integer, got boolean',
        expected: 'string|integer',
        received: 'true',
      },
    ]);
  });

  it('reports the errors of the oneOf alternative a discriminator points to', () => {
    const error = kitchen({ target: { kind: 'url', href: 5 } });
    expect(issuesOf(error)).toEqual([
      expect.objectContaining({ path: '/target/href', message: '/target/href must be string, got number' }),
    ]);
  });

  it('reports a discriminator that matches no alternative as one issue', () => {
    const error = kitchen({ target: { kind: 'ftp' } });
    expect(issuesOf(error)).toEqual([
      expect.objectContaining({
        path: '/target/kind',
        message: "/target/kind must be one of 'file', 'url', got 'ftp'",
      }),
    ]);
  });

  it('keeps received previews short', () => {
    const error = readFile({ path: 'x'.repeat(10_000).split('') });
    const received = issuesOf(error)[0].received!;
    expect(received.length).toBeLessThanOrEqual(60);
    expect(received.endsWith('…')).toBe(true);
    expect(error.message.length).toBeLessThan(300);
  });

  it('caps the issues listed and says how many more there are', () => {
    const args: Record<string, unknown> = { path: 'a' };
    for (let i = 0; i < 50; i++) args[`unknown_${i}`] = i;
    const error = readFile(args);
    expect(issuesOf(error)).toHaveLength(20);
    expect(error.message).toContain('; and 40 more problems. Usage: read_file(');
  });

  it('keeps a model-supplied key with a newline on one line of the message', () => {
    expect(readFile({ path: 'a', 'evil\nkey': 1 }).message).toContain('unknown parameter: evil\\nkey');
  });
});

describe('invalid_arguments under load', () => {
  // Its speed is the bench's to measure; here, that the work and the message stay bounded.
  it('describes 100,000 wrong array items by the first problem only, with a bounded message', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        argv: { type: 'array', items: { type: 'string' } },
        either: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }] },
      },
    };
    const numbers = Array.from({ length: 100_000 }, (_, i) => i);
    const error = refusal('bulk', schema, { argv: numbers, either: numbers });
    // Too many values to collect every error of (tool-validator.ts): the check stops at the first.
    expect(issuesOf(error)).toHaveLength(1);
    expect(error.message).toContain('/argv/0 must be string, got number');
    expect(error.message.length).toBeLessThan(1_000);
  });
});
