import { FORBIDDEN_ARGUMENT_KEYS } from './argument-parser.js';
import { isPlainObject } from './json-preview.js';
import { resolveLocalRef, type JsonSchema } from './schema-type.js';

// Free-form maps (an object of any keys whose values share one schema: fetch_url's headers, shell_exec's
// env) as OpenAI's strict mode has them: a list of `{name, value}`, since a strict object names every key.
// Toolgate lists such a parameter that way when asked for strict definitions (tools/openai-strict.ts) and
// maps a list sent there back to the object before validation, which then checks the full schema. Only
// maps reached from the root through `properties` are listed so, and only they are mapped back.
export interface MapPlan {
  maps: ReadonlySet<string>;
  nested: ReadonlyMap<string, MapPlan>;
}

const MAX_DEPTH = 16;

// A schema of a free-form map: an object without named properties whose other values have a schema.
export function isFreeFormMap(schema: unknown): schema is JsonSchema & { additionalProperties: JsonSchema } {
  if (!isPlainObject(schema) || schema.type !== 'object') return false;
  const named = isPlainObject(schema.properties) && Object.keys(schema.properties).length > 0;
  return !named && isPlainObject(schema.additionalProperties) && schema.patternProperties === undefined;
}

export function compileMapPlan(schema: JsonSchema, root: JsonSchema = schema, depth = 0): MapPlan | null {
  const node = resolveLocalRef(schema, root);
  if (!isPlainObject(node) || !isPlainObject(node.properties) || depth > MAX_DEPTH) return null;
  const maps = new Set<string>();
  const nested = new Map<string, MapPlan>();
  for (const [name, property] of Object.entries(node.properties)) {
    const resolved = resolveLocalRef(property, root);
    if (isFreeFormMap(resolved)) maps.add(name);
    const inner = isPlainObject(resolved) ? compileMapPlan(resolved, root, depth + 1) : null;
    if (inner) nested.set(name, inner);
  }
  return maps.size > 0 || nested.size > 0 ? { maps, nested } : null;
}

// The arguments with each `{name, value}` list at a map's place turned into the map; the same object when
// there is none. A list that is not exactly such pairs with distinct, allowed names is left as it came, for
// validation to refuse ("must be object").
export function pairsToMaps(args: Record<string, unknown>, plan: MapPlan | null): Record<string, unknown> {
  if (!plan) return args;
  let out = args;
  for (const [key, value] of Object.entries(args)) {
    let next: unknown = value;
    if (Array.isArray(value) && plan.maps.has(key)) next = mapOf(value) ?? value;
    else if (isPlainObject(value) && plan.nested.has(key)) next = pairsToMaps(value, plan.nested.get(key)!);
    if (next === value) continue;
    if (out === args) out = { ...args };
    out[key] = next;
  }
  return out;
}

// Whether a value is a list of `{name, value}` pairs (also read by the redaction of refused arguments).
export function isPairList(value: unknown): value is Array<{ name: string; value: unknown }> {
  return (
    Array.isArray(value) &&
    value.every((pair) => isPlainObject(pair) && typeof pair.name === 'string' && 'value' in pair && Object.keys(pair).length === 2)
  );
}

function mapOf(pairs: unknown[]): Record<string, unknown> | null {
  if (!isPairList(pairs)) return null;
  const map: Record<string, unknown> = {};
  for (const { name, value } of pairs) {
    if (FORBIDDEN_ARGUMENT_KEYS.has(name) || Object.hasOwn(map, name)) return null;
    map[name] = value;
  }
  return map;
}
