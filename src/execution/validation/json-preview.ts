export const PREVIEW_LENGTH = 60;
const QUOTE_LENGTH = 40;
const PREVIEW_DEPTH = 8;

// JSON type names as a model would write them in a schema ("got array", not "got object").
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  // Any realm's Object.prototype (its own prototype is null) or a null prototype; never a Date, Map or class
  // instance.
  return proto === null || Object.getPrototypeOf(proto) === null;
}

// Reads an own property without triggering getters or walking the prototype chain.
export function ownValue(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  return Object.getOwnPropertyDescriptor(value, key)?.value;
}

// A short JSON rendering of a value; stops writing once the budget is spent, so a 5 MB value costs no more
// than a small one.
export function previewJson(value: unknown, max = PREVIEW_LENGTH): string {
  const parts: string[] = [];
  let length = 0;
  const push = (text: string): boolean => {
    parts.push(text);
    length += text.length;
    return length <= max;
  };
  const visit = (node: unknown, depth: number): boolean => {
    if (typeof node === 'string') return push(JSON.stringify(node.length > max ? node.slice(0, max) : node));
    if (typeof node !== 'object' || node === null) {
      return push(typeof node === 'bigint' ? node.toString() : (JSON.stringify(node) ?? typeof node));
    }
    if (depth >= PREVIEW_DEPTH) return push('…');
    const isArray = Array.isArray(node);
    if (!push(isArray ? '[' : '{')) return false;
    const keys = isArray ? null : Object.keys(node);
    const count = isArray ? node.length : keys!.length;
    for (let i = 0; i < count; i++) {
      if (i > 0 && !push(',')) return false;
      if (keys) {
        const key = keys[i];
        if (!push(`${JSON.stringify(key.length > max ? key.slice(0, max) : key)}:`)) return false;
        if (!visit(ownValue(node, key), depth + 1)) return false;
      } else if (!visit((node as unknown[])[i], depth + 1)) {
        return false;
      }
    }
    return push(isArray ? ']' : '}');
  };
  visit(value, 0);
  const text = parts.join('');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// A value as it appears inside a sentence: strings in single quotes and kept on one line, anything else as
// short JSON.
export function quoteValue(value: unknown, max = QUOTE_LENGTH): string {
  return typeof value === 'string' ? `'${oneLine(value, max)}'` : previewJson(value, max);
}

// Truncates and escapes newlines and control characters, so a model-supplied name cannot break a message apart.
export function oneLine(text: string, max = QUOTE_LENGTH): string {
  const cut = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return JSON.stringify(cut).slice(1, -1).replace(/\\"/g, '"');
}

// "'a'", "'a' or 'b'", "'a', 'b' or 'c'"
export function orList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}
