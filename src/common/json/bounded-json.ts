import { JsonText, writeJson } from './json-text.js';

// How deep a tool's result may nest. Every writer of JSON downstream (JSON.stringify in the HTTP answer,
// the MCP transport, Prisma's jsonb) recurses once per level; past a few thousand levels they overflow the
// stack, so a result must be judged before any of them sees it.
export const RESULT_MAX_DEPTH = 256;

export interface JsonLimits {
  // Containers nested inside each other; the outermost object or array is level 1.
  maxDepth: number;
  // UTF-8 bytes of the JSON text.
  maxBytes: number;
}

export type JsonLimitExceeded = { exceeded: 'depth' | 'size' | 'not_json' };

// Whether `value` serialises within `limits`, decided without recursion and, for most values, without
// writing the text: a walk with an explicit stack checks the depth and bounds the size from below and
// above; only a value whose bounds straddle the cap is written out to be measured exactly. The walk stops
// as soon as the lower bound passes the cap, so a huge value (or one sharing subtrees) costs at most about
// `maxBytes` steps.
export function measureJson(value: unknown, limits: JsonLimits): 'fits' | JsonLimitExceeded {
  const measured = measureJsonSize(value, limits);
  return 'bytes' in measured ? 'fits' : measured;
}

// The same, answering how large the text is when it fits: exactly when it had to be written, else at least
// `bytes` (each string counted as one byte a character), which is close for most results.
export function measureJsonSize(value: unknown, limits: JsonLimits): { bytes: number } | JsonLimitExceeded {
  const walked = walk(value, limits);
  if (walked !== 'measure') return walked;
  const written = write(value, limits);
  return 'text' in written ? { bytes: Buffer.byteLength(written.text) } : written;
}

// The JSON text of `value` when it fits `limits`, else which limit it passed. Never overflows the stack:
// the text is written by JSON.stringify only once the walk has shown it nests no deeper than maxDepth.
export function boundedJson(value: unknown, limits: JsonLimits): { text: string } | JsonLimitExceeded {
  const walked = walk(value, limits);
  if (walked !== 'measure' && !('bytes' in walked)) return walked;
  return write(value, limits);
}

function write(value: unknown, limits: JsonLimits): { text: string } | JsonLimitExceeded {
  let text: string | undefined;
  try {
    text = writeJson(value);
  } catch {
    // A BigInt, or a toJSON that throws: not JSON.
    return { exceeded: 'not_json' };
  }
  if (text === undefined) return { text: 'null' };
  return Buffer.byteLength(text) <= limits.maxBytes ? { text } : { exceeded: 'size' };
}

// Bytes a string takes in JSON text: at least its UTF-16 length (each unit is one byte or more) plus its
// quotes, at most six bytes a unit (\uXXXX) plus the quotes.
export const JSON_BYTES_PER_UNIT_MAX = 6;
const STRING_MIN = (s: string) => s.length + 2;
const STRING_MAX = (s: string) => JSON_BYTES_PER_UNIT_MAX * s.length + 2;
// The longest number JSON.stringify writes is 24 characters (-1.2345678901234567e-308).
const NUMBER_MAX = 24;

// Fits: at least `bytes`; `measure`: only writing the text can tell.
function walk(root: unknown, limits: JsonLimits): { bytes: number } | 'measure' | JsonLimitExceeded {
  let min = 0;
  let max = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value: raw, depth } = stack.pop()!;
    // Already written: its size and depth are known, and parsing it (its toJSON) would be the cost it saves.
    if (raw instanceof JsonText) {
      if (depth + raw.depth > limits.maxDepth) return { exceeded: 'depth' };
      min += raw.bytes;
      max += raw.bytes;
      if (min > limits.maxBytes) return { exceeded: 'size' };
      continue;
    }
    const value = hasToJson(raw) ? callToJson(raw) : raw;
    if (value === NOT_JSON) return { exceeded: 'not_json' };
    switch (typeof value) {
      case 'string':
        min += STRING_MIN(value);
        max += STRING_MAX(value);
        break;
      case 'number':
        min += 1;
        max += NUMBER_MAX;
        break;
      case 'boolean':
        min += 4;
        max += 5;
        break;
      case 'bigint':
        return { exceeded: 'not_json' };
      case 'object': {
        if (value === null) {
          min += 4;
          max += 4;
          break;
        }
        if (depth + 1 > limits.maxDepth) return { exceeded: 'depth' };
        // The brackets, and a comma between members.
        let members = 0;
        if (Array.isArray(value)) {
          members = value.length;
          for (let i = value.length - 1; i >= 0; i--) {
            const item: unknown = value[i];
            // undefined, functions and symbols are written as null in an array.
            if (item === undefined || typeof item === 'function' || typeof item === 'symbol') {
              min += 4;
              max += 4;
            } else stack.push({ value: item, depth: depth + 1 });
          }
        } else {
          const object = value as Record<string, unknown>;
          for (const key of Object.keys(object)) {
            const item = object[key];
            // Left out of the text altogether, as JSON.stringify does.
            if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
            members++;
            // The key, its quotes and the colon.
            min += STRING_MIN(key) + 1;
            max += STRING_MAX(key) + 1;
            stack.push({ value: item, depth: depth + 1 });
          }
        }
        const brackets = 2 + Math.max(0, members - 1);
        min += brackets;
        max += brackets;
        break;
      }
      default:
        // undefined, a function or a symbol at the top: JSON.stringify writes nothing, taken as null.
        min += 4;
        max += 4;
    }
    if (min > limits.maxBytes) return { exceeded: 'size' };
  }
  return max <= limits.maxBytes ? { bytes: min } : 'measure';
}

function hasToJson(value: unknown): value is { toJSON: () => unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

const NOT_JSON = Symbol('not JSON');

// JSON.stringify would throw on a toJSON that throws.
function callToJson(value: { toJSON: () => unknown }): unknown {
  try {
    return value.toJSON();
  } catch {
    return NOT_JSON;
  }
}

// The error a call answers when its tool ran but the result cannot be carried: the run counts, the result
// is dropped, and the error names the cap it passed.
export function droppedResult({ exceeded }: JsonLimitExceeded, limits: JsonLimits): { code: string; message: string; retryable: false } {
  const [code, what] =
    exceeded === 'depth'
      ? ['result_too_deep', `nests more than ${limits.maxDepth} levels deep`]
      : exceeded === 'size'
        ? ['result_too_large', `is more than ${limits.maxBytes} bytes as JSON`]
        : ['result_not_json', 'is not JSON'];
  return {
    code,
    message: `The tool ran, but its result ${what} (the cap on results), so it was dropped; ask for less, or a flatter shape`,
    retryable: false,
  };
}
