import { isPlainObject, jsonTypeOf, oneLine, previewJson } from './json-preview.js';
import { invalidArguments, type ToolArgumentIssue, type ToolRef } from './validation-message.js';

export const MAX_ARGUMENT_DEPTH = 64;
// No parameter name comes near it. A longer key is refused before anything else reads the arguments: a
// megabyte key of slashes cost every later step (the schema's errors, the redaction's JSON Pointers, where
// each '/' becomes '~1') a second of the event loop, for every tenant.
export const MAX_ARGUMENT_KEY_CHARS = 1024;

// Keys that reach a prototype when arguments are merged or assigned further down; refused at any depth.
export const FORBIDDEN_ARGUMENT_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

// `raw` is the `arguments` field as sent: an object, or a JSON string (as OpenAI delivers tool calls).
export function parseToolArguments(raw: unknown, tool: ToolRef): Record<string, unknown> {
  const value = typeof raw === 'string' ? parseJsonText(raw, tool) : raw;
  if (!isPlainObject(value)) throw invalidArguments(tool, [notAnObject(value, typeof raw === 'string')]);
  const problem = scanArgumentTree(value);
  if (problem) throw invalidArguments(tool, [problem]);
  return value;
}

function parseJsonText(text: string, tool: ToolRef): unknown {
  try {
    // JSON.parse makes `__proto__` an own property (it never sets the prototype); the scan below refuses it.
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? oneLine(error.message, 120) : 'unparseable';
    throw invalidArguments(tool, [
      {
        path: '',
        keyword: 'json',
        message: `arguments are not valid JSON (${reason}); send one JSON object with the parameters`,
        expected: 'JSON object',
        received: previewJson(text),
      },
    ]);
  }
}

function notAnObject(value: unknown, fromText: boolean): ToolArgumentIssue {
  const jsonType = jsonTypeOf(value);
  const type = value === undefined ? 'nothing' : jsonType === 'object' ? 'a non-JSON object' : jsonType;
  const encodedTwice = fromText && typeof value === 'string' && /^\s*\{/.test(value);
  const hint = encodedTwice ? ' (the object was JSON-encoded twice; encode it once)' : '';
  return {
    path: '',
    keyword: 'type',
    message: `arguments must be a JSON object, got ${type}${hint}`,
    expected: 'object',
    ...(value === undefined ? {} : { received: previewJson(value) }),
  };
}

interface Frame {
  readonly value: object;
  readonly depth: number;
  readonly parent: Frame | undefined;
  readonly key: string;
}

// Walks the whole tree with an explicit stack (a 100,000-level array must not overflow the call stack) and
// reports the first forbidden key or the first container nested deeper than `maxDepth` (the root is level 1).
export function scanArgumentTree(root: object, maxDepth = MAX_ARGUMENT_DEPTH): ToolArgumentIssue | undefined {
  const stack: Frame[] = [{ value: root, depth: 1, parent: undefined, key: '' }];
  // JSON has no shared or cyclic references; skipping repeats keeps a hand-built graph from costing 2^depth visits.
  const seen = new WeakSet<object>();
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (seen.has(frame.value)) continue;
    seen.add(frame.value);
    const isArray = Array.isArray(frame.value);
    const keys = isArray ? null : Reflect.ownKeys(frame.value);
    const count = isArray ? (frame.value as unknown[]).length : keys!.length;
    for (let i = 0; i < count; i++) {
      const key: unknown = keys ? keys[i] : String(i);
      if (typeof key !== 'string') continue;
      if (!isArray && FORBIDDEN_ARGUMENT_KEYS.has(key)) return forbiddenKey(pointerOf(frame, key), key);
      if (!isArray && key.length > MAX_ARGUMENT_KEY_CHARS) return keyTooLong(pointerOf(frame, `${key.slice(0, 40)}…`), key.length);
      const child: unknown = isArray ? (frame.value as unknown[])[i] : Object.getOwnPropertyDescriptor(frame.value, key)?.value;
      if (typeof child !== 'object' || child === null) continue;
      if (frame.depth >= maxDepth) return tooDeep(pointerOf(frame, key), maxDepth);
      stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
    }
  }
  return undefined;
}

function pointerOf(frame: Frame, key: string): string {
  const tokens = [key];
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) tokens.push(f.key);
  return tokens
    .reverse()
    .map((token) => `/${token.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('');
}

function forbiddenKey(path: string, key: string): ToolArgumentIssue {
  return {
    path,
    keyword: 'forbiddenKey',
    message: `${oneLine(path, 120)}: the key '${key}' is not allowed anywhere in arguments; rename or remove it`,
  };
}

function keyTooLong(path: string, length: number): ToolArgumentIssue {
  return {
    path: oneLine(path, 200),
    keyword: 'maxKeyLength',
    message: `a key of ${length} characters at ${oneLine(path, 80)}; keys in arguments are at most ${MAX_ARGUMENT_KEY_CHARS} characters`,
    expected: `keys of at most ${MAX_ARGUMENT_KEY_CHARS} characters`,
  };
}

function tooDeep(path: string, maxDepth: number): ToolArgumentIssue {
  return {
    path: oneLine(path, 200),
    keyword: 'maxDepth',
    message: `arguments are nested more than ${maxDepth} levels deep (at ${oneLine(path, 80)}); flatten them`,
    expected: `at most ${maxDepth} levels`,
  };
}
