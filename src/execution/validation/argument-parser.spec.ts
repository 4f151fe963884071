import fc from 'fast-check';
import { AppError } from '../../common/errors/app-error.js';
import {
  FORBIDDEN_ARGUMENT_KEYS,
  MAX_ARGUMENT_DEPTH,
  MAX_ARGUMENT_KEY_CHARS,
  parseToolArguments,
  scanArgumentTree,
} from './argument-parser.js';

const tool = { name: 'read_file', usage: 'read_file(path: string, offset?: integer, limit?: integer)' };

function refusal(raw: unknown): AppError {
  try {
    parseToolArguments(raw, tool);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('the arguments were accepted');
}

function issuesOf(error: AppError): { path: string; keyword: string; message: string }[] {
  return (error.extra as { issues: { path: string; keyword: string; message: string }[] }).issues;
}

const prototypeNames = Object.getOwnPropertyNames(Object.prototype);

function expectPrototypesUntouched(): void {
  expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeNames);
  expect(Object.getPrototypeOf({})).toBe(Object.prototype);
}

describe('parseToolArguments', () => {
  it('passes a JSON object through unchanged', () => {
    const args = { path: 'README.md', limit: 10 };
    expect(parseToolArguments(args, tool)).toBe(args);
  });

  it('accepts arguments given as a JSON string, as OpenAI sends them', () => {
    expect(parseToolArguments('{"path": "README.md", "offset": 2}', tool)).toEqual({ path: 'README.md', offset: 2 });
  });

  it('[sec-39] answers 422 saying the arguments are not valid JSON for a truncated JSON string', () => {
    const error = refusal('{"path": ');
    expect(error.status).toBe(422);
    expect(error.code).toBe('invalid_arguments');
    expect(error.message).toMatch(/^Invalid arguments for read_file: arguments are not valid JSON \(.+\)/);
    expect(error.message.endsWith(`Usage: ${tool.usage}`)).toBe(true);
    expect(issuesOf(error)).toEqual([expect.objectContaining({ path: '', keyword: 'json' })]);
    expect(error.extra).toMatchObject({ tool: 'read_file', usage: tool.usage });
  });

  it('[sec-39] refuses an empty string and trailing garbage as invalid JSON', () => {
    for (const raw of ['', '   ', '{"path": "a"} x', "{'path': 'a'}"]) {
      expect(issuesOf(refusal(raw))[0].keyword).toBe('json');
    }
  });

  it.each([
    ['null', null, 'null'],
    ['an array', ['README.md'], 'array'],
    ['a number', 42, 'number'],
    ['a boolean', true, 'boolean'],
    ['a JSON string holding null', 'null', 'null'],
    ['a JSON string holding an array', '["README.md"]', 'array'],
    ['a JSON string holding a number', '42', 'number'],
  ])('answers 422 for %s, saying arguments must be a JSON object', (_label, raw, type) => {
    const error = refusal(raw);
    expect(error.status).toBe(422);
    expect(error.message).toContain(`arguments must be a JSON object, got ${type}`);
    expect(issuesOf(error)[0]).toMatchObject({ path: '', keyword: 'type' });
  });

  it('tells the model when the object was JSON-encoded twice', () => {
    const error = refusal(JSON.stringify(JSON.stringify({ path: 'a' })));
    expect(error.message).toContain('got string (the object was JSON-encoded twice; encode it once)');
  });

  it('refuses objects that JSON cannot produce (a Date, a Map)', () => {
    expect(refusal(new Date()).message).toContain('got a non-JSON object');
    expect(refusal(new Map()).message).toContain('got a non-JSON object');
  });

  it('refuses a key longer than MAX_ARGUMENT_KEY_CHARS at any depth, naming where without echoing it', () => {
    const atLimit = 'k'.repeat(MAX_ARGUMENT_KEY_CHARS);
    expect(parseToolArguments({ path: 'a', opts: { [atLimit]: 1 } }, tool)).toBeDefined();
    const key = `token${'/'.repeat(1_000_000)}`;
    const error = refusal(JSON.parse(JSON.stringify({ path: 'a', opts: [{ [key]: 'v' }] })));
    const issue = issuesOf(error)[0];
    expect(issue).toMatchObject({ keyword: 'maxKeyLength' });
    expect(issue.path.startsWith('/opts/0/token~1~1')).toBe(true);
    expect(issue.message).toContain(`a key of ${key.length} characters at /opts/0/token`);
    expect(issue.message).toContain(`at most ${MAX_ARGUMENT_KEY_CHARS} characters`);
    expect(JSON.stringify(error.extra).length).toBeLessThan(2000);
  });

  it('accepts the forbidden names as values, only keys are refused', () => {
    expect(parseToolArguments({ path: '__proto__', tags: ['constructor', 'prototype'] }, tool)).toBeDefined();
  });

  it('[sec-37] refuses {"__proto__": {"isAdmin": true}} parsed by JSON.parse, without touching any prototype', () => {
    const parsed: unknown = JSON.parse('{"__proto__": {"isAdmin": true}}');
    const error = refusal(parsed);
    expect(error.status).toBe(422);
    expect(issuesOf(error)).toEqual([expect.objectContaining({ path: '/__proto__', keyword: 'forbiddenKey' })]);
    expect(error.message).toContain("the key '__proto__' is not allowed");
    expectPrototypesUntouched();
  });

  it('[sec-37] refuses {"__proto__": …} sent as a JSON string', () => {
    const error = refusal('{"path": "a", "__proto__": {"isAdmin": true}}');
    expect(issuesOf(error)[0]).toMatchObject({ path: '/__proto__', keyword: 'forbiddenKey' });
    expectPrototypesUntouched();
  });

  it('[sec-37] refuses {"constructor": {"prototype": …}} nested deep inside objects and arrays', () => {
    const raw = '{"path": "a", "opts": {"list": [1, {"x": {"constructor": {"prototype": {"isAdmin": true}}}}]}}';
    const error = refusal(raw);
    expect(issuesOf(error)[0]).toMatchObject({ path: '/opts/list/1/x/constructor', keyword: 'forbiddenKey' });
    expect(refusal(JSON.parse(raw))).toBeInstanceOf(AppError);
    expectPrototypesUntouched();
  });

  it('[sec-37] refuses a bare "prototype" key', () => {
    expect(issuesOf(refusal({ a: { prototype: 1 } }))[0]).toMatchObject({ path: '/a/prototype' });
  });

  it('[sec-37] refuses any JSON value with a forbidden key injected at any depth; no prototype changes', () => {
    const container = fc.oneof(
      fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 4 }),
    );
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), container, { maxKeys: 4 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.constantFrom(...FORBIDDEN_ARGUMENT_KEYS),
        fc.boolean(),
        (base, route, key, asText) => {
          const text = JSON.stringify(injectAt(base, route, key));
          const error = refusal(asText ? text : JSON.parse(text));
          expect(error.status).toBe(422);
          expect(issuesOf(error)[0].keyword).toBe('forbiddenKey');
          expectPrototypesUntouched();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses 100,000 nested arrays (as a parsed value) without overflowing the stack', () => {
    let nested: unknown = [];
    for (let i = 0; i < 100_000; i++) nested = [nested];
    const error = refusal({ path: 'a', data: nested });
    expect(error.status).toBe(422);
    expect(issuesOf(error)[0]).toMatchObject({ keyword: 'maxDepth' });
    expect(error.message).toContain(`nested more than ${MAX_ARGUMENT_DEPTH} levels deep`);
  });

  it('refuses 100,000 nested arrays sent as a JSON string', () => {
    const raw = `{"data": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(issuesOf(refusal(raw))[0]).toMatchObject({ keyword: 'maxDepth' });
  });

  it(`accepts exactly ${MAX_ARGUMENT_DEPTH} levels and refuses one more`, () => {
    const nest = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = {};
      for (let i = 1; i < levels; i++) value = { a: value };
      return value;
    };
    expect(scanArgumentTree(nest(MAX_ARGUMENT_DEPTH))).toBeUndefined();
    expect(scanArgumentTree(nest(MAX_ARGUMENT_DEPTH + 1))).toMatchObject({ keyword: 'maxDepth' });
  });

  it('terminates on a cyclic object built in code', () => {
    const cyclic: Record<string, unknown> = { path: 'a' };
    cyclic.self = cyclic;
    expect(scanArgumentTree(cyclic)).toBeUndefined();
  });
});

// Copies `base`, walks `route` down through containers and adds `key` to the container reached, as JSON.parse would.
function injectAt(base: Record<string, unknown>, route: number[], key: string): Record<string, unknown> {
  const payload = key === 'constructor' ? { prototype: { isAdmin: true } } : { isAdmin: true };
  const copy = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  let node: unknown = copy;
  for (const step of route) {
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node as object);
    const containers = children.filter((child) => typeof child === 'object' && child !== null);
    if (containers.length === 0) break;
    node = containers[step % containers.length];
  }
  if (Array.isArray(node)) node.push({ [key]: payload });
  else Object.defineProperty(node, key, { value: payload, enumerable: true, configurable: true, writable: true });
  return copy;
}
