import { isPlainObject } from './json-preview.js';
import { resolveLocalRef, type JsonSchema } from './schema-type.js';

// Where a `null` means "left out": optional parameters whose schema does not accept null, by name, and the
// same inside nested objects. Strict function calling (OpenAI's strict mode, the Agents SDK's converter)
// makes every optional parameter required and nullable, so a model sends `"offset": null` for "no offset";
// Toolgate drops such a null before validation instead of refusing it. A parameter that accepts null keeps it.
export interface NullPlan {
  absent: ReadonlySet<string>;
  nested: ReadonlyMap<string, NullPlan>;
}

const MAX_DEPTH = 16;

export function compileNullPlan(schema: JsonSchema, root: JsonSchema = schema, depth = 0): NullPlan | null {
  const node = resolveLocalRef(schema, root);
  if (!isPlainObject(node) || !isPlainObject(node.properties) || depth > MAX_DEPTH) return null;
  const required = new Set(Array.isArray(node.required) ? (node.required as unknown[]) : []);
  const absent = new Set<string>();
  const nested = new Map<string, NullPlan>();
  for (const [name, property] of Object.entries(node.properties)) {
    if (!required.has(name) && !acceptsNull(property, root)) absent.add(name);
    const inner = isPlainObject(property) ? compileNullPlan(property, root, depth + 1) : null;
    if (inner) nested.set(name, inner);
  }
  return absent.size > 0 || nested.size > 0 ? { absent, nested } : null;
}

// The arguments without the nulls the plan drops; the same object when there are none.
export function dropAbsentNulls(args: Record<string, unknown>, plan: NullPlan | null): Record<string, unknown> {
  if (!plan) return args;
  let out = args;
  for (const [key, value] of Object.entries(args)) {
    let next: unknown = value;
    if (value === null && plan.absent.has(key)) next = undefined;
    else if (isPlainObject(value) && plan.nested.has(key)) next = dropAbsentNulls(value, plan.nested.get(key)!);
    if (next === value) continue;
    if (out === args) out = { ...args };
    if (next === undefined) delete out[key];
    else out[key] = next;
  }
  return out;
}

function acceptsNull(schema: unknown, root: JsonSchema, depth = 0): boolean {
  if (schema === true) return true;
  const node = resolveLocalRef(schema, root);
  if (!isPlainObject(node) || depth > MAX_DEPTH) return false;
  if (node.nullable === true) return true;
  if ('const' in node) return node.const === null;
  if (Array.isArray(node.enum)) return node.enum.includes(null);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = node[key];
    if (Array.isArray(branches)) return branches.some((branch) => acceptsNull(branch, root, depth + 1));
  }
  if (Array.isArray(node.type)) return node.type.includes('null');
  if (typeof node.type === 'string') return node.type === 'null';
  // No type at all (an empty schema, or one of constraints only): null passes it.
  return !('not' in node) && !('allOf' in node);
}
