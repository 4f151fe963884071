import { RE2JS } from 're2js';
import { linearRegExp } from '../execution/validation/linear-patterns.js';
import { SchemaExpansionError, schemaExpansion } from '../execution/validation/schema-expansion.js';
import { createToolAjv, JSON_SCHEMA_2020_12, JSON_SCHEMA_DRAFT_07, type ToolAjv } from '../execution/validation/ajv-factory.js';
import type { JsonSchema } from '../execution/validation/schema-type.js';

export const SCHEMA_LIMITS = {
  // Bytes of one schema's JSON text.
  maxBytes: 64 * 1024,
  // Nesting of objects and arrays in one schema.
  maxDepth: 32,
  maxPatternLength: 1024,
  // Subschemas applied to one value once $refs are followed (schema-expansion.ts).
  maxExpansion: 10_000,
} as const;

// Why a tenant's schema was refused, and where in it (a JSON pointer).
export class SchemaRefusal extends Error {
  constructor(
    readonly location: string,
    readonly reason: string,
  ) {
    super(`${location || '/'}: ${reason}`);
    this.name = 'SchemaRefusal';
  }
}

// One Ajv per tenant skill version: a tenant's `$id`s can never be seen from another's schemas.
export function createTenantAjv(): ToolAjv {
  return createToolAjv({ regExp: linearRegExp });
}

// The `$schema` values Ajv knows as its two dialects' meta-schemas (spelled as they publish them).
const SUPPORTED_DIALECTS: readonly string[] = [
  JSON_SCHEMA_DRAFT_07,
  'http://json-schema.org/draft-07/schema',
  JSON_SCHEMA_2020_12,
  `${JSON_SCHEMA_2020_12}#`,
];

// A tenant's schema is untrusted input. Checked in full before anything is stored: its size and
// depth, no `$data`, no `$ref` leaving the schema, every pattern on the linear-time engine, and a
// compile under AJV's strict mode (which refuses unknown keywords).
export function vetSchema(schema: unknown, ajv: ToolAjv, kind: 'input' | 'output'): JsonSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new SchemaRefusal('', 'a schema must be a JSON object');
  }
  // Depth first, iteratively: serialising a 10,000-level schema to measure it would recurse that deep.
  const keywordAt = walk(schema as JsonSchema);
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > SCHEMA_LIMITS.maxBytes) {
    throw new SchemaRefusal('', `the schema is ${bytes} bytes; the limit is ${SCHEMA_LIMITS.maxBytes}`);
  }
  if (kind === 'input' && (schema as JsonSchema).type !== 'object') {
    throw new SchemaRefusal('/type', 'an input schema must have "type": "object" (tool arguments are an object)');
  }
  try {
    schemaExpansion(schema, SCHEMA_LIMITS.maxExpansion);
  } catch (error) {
    if (error instanceof SchemaExpansionError) throw new SchemaRefusal('', error.reason);
    throw error;
  }
  try {
    ajv.compile(schema);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // AJV names an unknown keyword but not where it is; point at it so the tenant can find the typo.
    const unknown = /unknown keyword: "([^"]*)"/.exec(message)?.[1];
    throw new SchemaRefusal((unknown !== undefined && keywordAt.get(unknown)) || '', `it does not compile in strict mode: ${message}`);
  }
  return schema as JsonSchema;
}

// The walk alone (depth, forbidden keywords and patterns), iterative: what must pass before a schema may be
// serialised or sent to a worker thread, both of which recurse as deep as it nests.
export function vetSchemaShape(schema: unknown): void {
  if (typeof schema === 'object' && schema !== null && !Array.isArray(schema)) walk(schema as JsonSchema);
}

// Answers where each keyword first appears (a JSON pointer), for messages about a keyword.
function walk(root: JsonSchema): Map<string, string> {
  const keywordAt = new Map<string, string>();
  const stack: Array<{ node: unknown; pointer: string; depth: number; parentKey: string | null }> = [
    { node: root, pointer: '', depth: 1, parentKey: null },
  ];
  while (stack.length > 0) {
    const { node, pointer, depth, parentKey } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > SCHEMA_LIMITS.maxDepth) {
      throw new SchemaRefusal(pointer, `the schema nests deeper than ${SCHEMA_LIMITS.maxDepth} levels`);
    }
    // Keys under `properties` etc. are parameter names, not keywords.
    const namesOnly =
      parentKey === 'properties' ||
      parentKey === 'patternProperties' ||
      parentKey === 'definitions' ||
      parentKey === '$defs' ||
      parentKey === 'dependentSchemas';
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${escapePointer(key)}`;
      if (!Array.isArray(node) && !namesOnly) {
        checkKeyword(key, value, at);
        if (!keywordAt.has(key)) keywordAt.set(key, at);
      }
      if (parentKey === 'patternProperties') checkPattern(key, at);
      // The schema under a parameter name is keywords again, even when the parameter is called `properties`.
      const childKey = Array.isArray(node) ? parentKey : namesOnly ? null : key;
      stack.push({ node: value, pointer: at, depth: depth + 1, parentKey: childKey });
    }
  }
  return keywordAt;
}

function checkKeyword(key: string, value: unknown, at: string): void {
  if (key === '$data') throw new SchemaRefusal(at, '$data references are not allowed');
  if (typeof value === 'object' && value !== null && '$data' in value) {
    throw new SchemaRefusal(`${at}/$data`, '$data references are not allowed');
  }
  if ((key === '$ref' || key === '$dynamicRef') && (typeof value !== 'string' || !value.startsWith('#'))) {
    throw new SchemaRefusal(at, `only local references ("#/...") are allowed, got ${JSON.stringify(value)}`);
  }
  if (key === '$schema' && !SUPPORTED_DIALECTS.includes(value as string)) {
    throw new SchemaRefusal(
      at,
      `only JSON Schema draft-07 and 2020-12 are supported ("$schema": "${JSON_SCHEMA_DRAFT_07}" or "${JSON_SCHEMA_2020_12}")`,
    );
  }
  if (key === 'pattern' && typeof value === 'string') checkPattern(value, at);
}

function checkPattern(pattern: string, at: string): void {
  if (pattern.length > SCHEMA_LIMITS.maxPatternLength) {
    throw new SchemaRefusal(at, `the pattern is longer than ${SCHEMA_LIMITS.maxPatternLength} characters`);
  }
  try {
    RE2JS.compile(pattern);
  } catch (error) {
    throw new SchemaRefusal(
      at,
      `the pattern is not supported by the linear-time regular expression engine (no backreferences or lookaround): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
