import { isFreeFormMap } from '../execution/validation/map-pairs.js';
import type { JsonSchema } from '../execution/validation/schema-type.js';

// A tool's input schema rewritten for OpenAI's strict mode, for `?format=openai&strict=true`: every object
// closed with every property required (an optional one nullable: Toolgate reads its null as absent), the
// constraints strict mode does not take (lengths, patterns, formats, bounds, defaults) said in the
// description instead, oneOf as anyOf, and a free-form map as a list of `{name, value}` (map-pairs.ts maps
// it back). Only what is shown changes: a call is still validated against the tool's full schema. Null when
// the schema cannot be shown so (allOf, a tuple, a free-form object without a value schema, a map the
// arguments cannot be mapped back from, ...): the tool is then listed as it is (tool-formats.ts also lists it
// so when the result does not fit strict mode, e.g. nested too deep).
export function toOpenAiStrict(schema: JsonSchema): JsonSchema | null {
  try {
    const strict = convert(schema, true, true);
    const defs = ['$defs', 'definitions'].filter((key) => isObject(schema[key]));
    for (const key of defs)
      strict[key] = Object.fromEntries(Object.entries(schema[key] as JsonSchema).map(([name, def]) => [name, convert(def, false, false)]));
    return strict;
  } catch (error) {
    if (error instanceof NotStrict) return null;
    throw error;
  }
}

class NotStrict extends Error {}

// How each constraint strict mode leaves out is told to the model.
const SAID: Record<string, (value: unknown) => string | null> = {
  minLength: (v) => `at least ${String(v)} characters`,
  maxLength: (v) => `at most ${String(v)} characters`,
  pattern: (v) => `matching the regular expression ${String(v)}`,
  format: (v) => `format: ${String(v)}`,
  minimum: (v) => `at least ${String(v)}`,
  maximum: (v) => `at most ${String(v)}`,
  exclusiveMinimum: (v) => `more than ${String(v)}`,
  exclusiveMaximum: (v) => `less than ${String(v)}`,
  multipleOf: (v) => `a multiple of ${String(v)}`,
  minItems: (v) => `at least ${String(v)} items`,
  maxItems: (v) => `at most ${String(v)} items`,
  uniqueItems: (v) => (v === true ? 'no item twice' : null),
  minProperties: (v) => `at least ${String(v)} entries`,
  maxProperties: (v) => `at most ${String(v)} entries`,
  default: (v) => `default ${JSON.stringify(v)}`,
};
// Kept as they are.
const KEPT = new Set(['type', 'description', 'title', 'enum', 'const', '$ref']);
// Left out without a word: they only narrow what is valid (Toolgate still checks them), or only annotate.
const LEFT_OUT = new Set([
  '$schema',
  '$id',
  '$comment',
  '$anchor',
  '$dynamicAnchor',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'contains',
  'minContains',
  'maxContains',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
]);

// Rewritten below; any other keyword (allOf, prefixItems, patternProperties, ...) leaves the tool non-strict.
const STRUCTURE = new Set(['properties', 'required', 'additionalProperties', 'items', 'anyOf', 'oneOf', '$defs', 'definitions']);

// `root`: the tool's arguments object. `mappable`: reached from the root through properties only, where
// a map sent as pairs is mapped back.
function convert(raw: unknown, root: boolean, mappable: boolean): JsonSchema {
  if (!isObject(raw)) throw new NotStrict();
  if (isFreeFormMap(raw)) {
    if (!mappable) throw new NotStrict();
    const names = isObject(raw.propertyNames) ? said(raw.propertyNames, ['pattern', 'maxLength']).map((note) => `names ${note}`) : [];
    const pair = {
      type: 'object',
      properties: { name: { type: 'string' }, value: convert(raw.additionalProperties, false, false) },
      required: ['name', 'value'],
      additionalProperties: false,
    };
    const notes = [...said(raw, Object.keys(SAID)), ...names, 'each entry as {name, value}'];
    return { type: 'array', items: pair, description: described(raw.description, notes) };
  }
  if (Object.keys(raw).some((keyword) => !KEPT.has(keyword) && !(keyword in SAID) && !LEFT_OUT.has(keyword) && !STRUCTURE.has(keyword)))
    throw new NotStrict();
  const out: JsonSchema = {};
  for (const keyword of KEPT) if (keyword in raw && keyword !== 'description') out[keyword] = raw[keyword];
  const notes = said(raw, Object.keys(SAID));
  if (typeof raw.description === 'string' || notes.length > 0) out.description = described(raw.description, notes);
  const branches = raw.anyOf ?? raw.oneOf;
  if (branches !== undefined) {
    if (root || !Array.isArray(branches) || (raw.anyOf !== undefined && raw.oneOf !== undefined)) throw new NotStrict();
    out.anyOf = branches.map((branch) => convert(branch, false, false));
  }
  if (raw.type === 'array' || raw.items !== undefined) {
    if (!isObject(raw.items)) throw new NotStrict();
    out.items = convert(raw.items, false, false);
  }
  if (raw.type === 'object' || raw.properties !== undefined) {
    const properties = isObject(raw.properties) ? raw.properties : {};
    if (raw.additionalProperties !== undefined && raw.additionalProperties !== false) throw new NotStrict();
    if (Object.keys(properties).length === 0 && !root) throw new NotStrict();
    const required = new Set(Array.isArray(raw.required) ? (raw.required as string[]) : []);
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, property]) => {
        const shown = convert(property, false, mappable);
        return [name, required.has(name) ? shown : nullable(shown)];
      }),
    );
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}

// An optional parameter as strict mode has it: required, and null for "not given".
function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.$ref === 'string')
    return { anyOf: [{ $ref: schema.$ref }, { type: 'null' }], ...(schema.description ? { description: schema.description } : {}) };
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...(schema.anyOf as JsonSchema[]), { type: 'null' }] };
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as string[]) : null;
  if (types === null) throw new NotStrict();
  const withNull: JsonSchema = { ...schema, type: types.includes('null') ? types : [...types, 'null'] };
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) withNull.enum = [...(schema.enum as unknown[]), null];
  if ('const' in schema) throw new NotStrict();
  return withNull;
}

function said(schema: JsonSchema, keywords: readonly string[]): string[] {
  return keywords
    .filter((keyword) => keyword in schema && keyword in SAID)
    .map((keyword) => SAID[keyword](schema[keyword]))
    .filter((note): note is string => note !== null);
}

const described = (description: unknown, notes: string[]): string => {
  const text = typeof description === 'string' ? description : '';
  if (notes.length === 0) return text;
  return text === '' ? `(${notes.join('; ')})` : `${text} (${notes.join('; ')})`;
};

const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);
