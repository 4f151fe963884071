import { isPlainObject, jsonTypeOf } from './json-preview.js';

export type JsonSchema = Record<string, unknown>;

const MAX_LITERALS = 8;
const MAX_RENDER_DEPTH = 4;
const MAX_REF_HOPS = 8;

// Follows `$ref`s that point inside the same schema ("#/$defs/x", or "<$id>#/$defs/x" for the root's own $id).
export function resolveLocalRef(schema: unknown, root: JsonSchema): unknown {
  let current = schema;
  for (let hops = 0; hops < MAX_REF_HOPS && isPlainObject(current) && typeof current.$ref === 'string'; hops++) {
    const ref = current.$ref;
    const hash = ref.indexOf('#');
    const base = hash < 0 ? ref : ref.slice(0, hash);
    if (base !== '' && base !== root.$id) return current;
    current = followPointer(root, hash < 0 ? '' : ref.slice(hash + 1));
  }
  return current;
}

function followPointer(root: JsonSchema, pointer: string): unknown {
  let node: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = decodeToken(raw);
    if (key === undefined) return undefined;
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

function decodeToken(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
  } catch {
    return undefined;
  }
}

export function renderLiteral(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return JSON.stringify(value) ?? 'null';
}

function union(parts: readonly string[]): string {
  return [...new Set(parts)].join('|');
}

export function renderLiterals(values: readonly unknown[]): string {
  const shown = values.slice(0, MAX_LITERALS).map(renderLiteral);
  return union(values.length > MAX_LITERALS ? [...shown, '…'] : shown);
}

// Compact, TypeScript-like type of a schema: string, integer, string[], 'a'|'b', object, string|number.
export function renderSchemaType(schema: unknown, root: JsonSchema, depth = 0): string {
  if (schema === false) return 'never';
  const s = resolveLocalRef(schema, root);
  if (!isPlainObject(s) || depth > MAX_RENDER_DEPTH) return 'any';
  if (typeof s.$ref === 'string') return 'any';
  if (Object.hasOwn(s, 'const')) return renderLiteral(s.const);
  if (Array.isArray(s.enum)) return renderLiterals(s.enum);
  const alternatives = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (alternatives) return union(alternatives.map((alt: unknown) => renderSchemaType(alt, root, depth + 1)));
  const types = declaredTypes(s);
  if (types.length === 0) return 'any';
  return union(types.map((type) => (type === 'array' ? renderArrayType(s, root, depth) : type)));
}

function renderArrayType(s: JsonSchema, root: JsonSchema, depth: number): string {
  if (Array.isArray(s.items)) {
    return `[${s.items.map((item: unknown) => renderSchemaType(item, root, depth + 1)).join(', ')}]`;
  }
  if (s.items === undefined || s.items === true) return 'array';
  const item = renderSchemaType(s.items, root, depth + 1);
  if (item === 'any') return 'array';
  return item.includes('|') ? `(${item})[]` : `${item}[]`;
}

// `type` as a list; infers object/array when a schema only says `properties` or `items`.
export function declaredTypes(s: JsonSchema): string[] {
  if (typeof s.type === 'string') return [s.type];
  if (Array.isArray(s.type)) return s.type.filter((t): t is string => typeof t === 'string');
  if (isPlainObject(s.properties)) return ['object'];
  if (s.items !== undefined) return ['array'];
  return [];
}

export function matchesJsonType(type: string, value: unknown): boolean {
  if (type === 'integer') return Number.isInteger(value);
  return jsonTypeOf(value) === type;
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
