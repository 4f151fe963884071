import type { ValidateFunction } from 'ajv';
import { JsonText } from '../common/json/json-text.js';
import type { ToolDefinition } from '../execution/tool-definition.js';
import { describeAjvErrors } from '../execution/validation/validation-message.js';
import { PatternTooCostly } from '../execution/validation/linear-patterns.js';
import { createTenantAjv } from '../skills/schema-vetting.js';

// A tool that declares an outputSchema promises results of that shape (MCP clients check structuredContent
// against it). Every successful result is checked before it is answered, audited or stored: one that
// breaks the promise is answered as the tool's error, naming the first mismatch, never passed on.
// Skills' schemas are a tenant's: patterns run on the linear-time engine, as when they were vetted.
const ajv = createTenantAjv();
// One compiled check per schema object (a definition keeps its schema for its life); the compiled function
// is kept here, not in Ajv's own cache, so a skill version that goes away takes its check with it.
const checks = new WeakMap<object, ValidateFunction>();

export interface OutputMismatch {
  code: 'invalid_output';
  message: string;
  retryable: false;
}

// MCP carries structured results as objects: a non-object result is wrapped as { result } (mcp-tool-results.ts),
// and a schema that does not describe an object is not advertised there, nor checked here.
export function checkToolOutput(definition: ToolDefinition, result: unknown): OutputMismatch | null {
  const schema = definition.outputSchema;
  if (!schema || schema.type !== 'object') return null;
  // Written by Toolgate's own code from a value of its declared type (a built-in's big listing): checking it
  // would mean parsing it, which is what it was written to save. Tests hold the text to the object's JSON.
  if (result instanceof JsonText) return null;
  let check = checks.get(schema);
  if (!check) {
    check = ajv.compile(schema);
    ajv.removeSchema(schema);
    checks.set(schema, check);
  }
  try {
    if (check(result)) return null;
  } catch (error) {
    if (!(error instanceof PatternTooCostly)) throw error;
    return {
      code: 'invalid_output',
      message: `The tool's result could not be checked against its declared output schema: ${error.message}; the result was withheld`,
      retryable: false,
    };
  }
  const issue = describeAjvErrors(check.errors ?? [], schema).issues[0];
  const where = issue?.path ? ` at ${issue.path}` : '';
  return {
    code: 'invalid_output',
    message: `The tool's result does not match its declared output schema${where}: ${issue?.message ?? 'it is not valid'}; the result was withheld`,
    retryable: false,
  };
}
