import type { OpenAPIObject } from '@nestjs/swagger';

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

// Keywords whose value is a schema, a list of schemas or a map of schemas (JSON Schema 2020-12).
const SCHEMA_VALUED = [
  'items',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];

// @nestjs/swagger writes OpenAPI 3.0 schemas (`nullable`, a schema-level `example`); the document is
// OpenAPI 3.1, whose schemas are JSON Schema 2020-12 (the dialect the skill and tool schemas are written
// in). This rewrites the 3.0 spellings in place: nullable becomes a `null` type, example becomes examples.
export function toJsonSchema2020(schema: unknown): void {
  if (!isNode(schema)) return;
  if (schema.nullable === true) {
    delete schema.nullable;
    if (typeof schema.type === 'string') {
      schema.type = [schema.type, 'null'];
      if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
    } else if (schema.type === undefined && (schema.$ref !== undefined || schema.allOf !== undefined || schema.oneOf !== undefined)) {
      const { description, ...rest } = schema;
      for (const key of Object.keys(schema)) delete schema[key];
      Object.assign(schema, { anyOf: [rest, { type: 'null' }] }, description === undefined ? {} : { description });
    }
    // No type at all already admits null.
  } else if (schema.nullable === false) {
    delete schema.nullable;
  }
  if ('example' in schema) {
    if (!('examples' in schema)) schema.examples = [schema.example];
    delete schema.example;
  }
  for (const key of SCHEMA_VALUED) toJsonSchema2020(schema[key]);
  for (const key of SCHEMA_LISTS) if (Array.isArray(schema[key])) (schema[key] as unknown[]).forEach(toJsonSchema2020);
  for (const key of SCHEMA_MAPS) if (isNode(schema[key])) Object.values(schema[key]).forEach(toJsonSchema2020);
}

const eachContentSchema = (content: unknown, visit: (schema: unknown) => void) => {
  if (isNode(content)) for (const media of Object.values(content)) if (isNode(media)) visit(media.schema);
};

// Every place a schema sits in the document: components, parameters, bodies, responses and their headers.
export function forEachSchema(document: OpenAPIObject, visit: (schema: unknown) => void): void {
  for (const schema of Object.values(document.components?.schemas ?? {})) visit(schema);
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem as Node)) {
      if (!isNode(operation)) continue;
      for (const parameter of (operation.parameters as unknown[] | undefined) ?? []) if (isNode(parameter)) visit(parameter.schema);
      if (isNode(operation.requestBody)) eachContentSchema(operation.requestBody.content, visit);
      for (const response of Object.values((operation.responses as Node | undefined) ?? {})) {
        if (!isNode(response)) continue;
        eachContentSchema(response.content, visit);
        for (const header of Object.values((response.headers as Node | undefined) ?? {})) if (isNode(header)) visit(header.schema);
      }
    }
  }
}
