import type { ToolDefinition } from '../execution/tool-definition.js';
import { invalidToolFormat } from './tools.errors.js';
import type { JsonSchema } from '../execution/validation/schema-type.js';
import { toOpenAiStrict } from './openai-strict.js';

export const TOOL_FORMATS = ['native', 'openai', 'openai-responses', 'anthropic', 'mcp'] as const;
export type ToolFormat = (typeof TOOL_FORMATS)[number];

export function parseToolFormat(value: string | undefined): ToolFormat {
  if (value === undefined || value === '') return 'native';
  if ((TOOL_FORMATS as readonly string[]).includes(value)) return value as ToolFormat;
  throw invalidToolFormat(value, TOOL_FORMATS);
}

// Each provider's own shape for a tool definition, so a client can hand the list straight to its model.
// `strict` (the OpenAI formats only): each tool's schema rewritten for strict mode where it can be
// (openai-strict.ts), instead of strict: false for a schema that does not fit as it is.
export function formatTool(
  tool: ToolDefinition,
  format: ToolFormat,
  { strict = false }: { strict?: boolean } = {},
): Record<string, unknown> {
  switch (format) {
    case 'native':
      return { ...tool };
    case 'openai':
      return {
        type: 'function',
        function: { name: tool.name, description: tool.description, ...openAiParameters(tool.inputSchema, strict) },
      };
    // The Responses API's function tool is flat: no `function` wrapper.
    case 'openai-responses':
      return { type: 'function', name: tool.name, description: tool.description, ...openAiParameters(tool.inputSchema, strict) };
    case 'anthropic':
      return { name: tool.name, description: tool.description, input_schema: tool.inputSchema };
    case 'mcp':
      return {
        name: tool.name,
        ...(tool.title ? { title: tool.title } : {}),
        description: tool.description,
        inputSchema: tool.inputSchema,
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
        annotations: {
          readOnlyHint: tool.annotations.readOnly,
          destructiveHint: tool.annotations.destructive,
          idempotentHint: tool.annotations.idempotent,
          openWorldHint: tool.annotations.openWorld,
        },
      };
  }
}

function openAiParameters(schema: JsonSchema, strict: boolean): { parameters: JsonSchema; strict: boolean } {
  const rewritten = strict ? toOpenAiStrict(schema) : null;
  if (rewritten !== null && fitsOpenAiStrictMode(rewritten)) return { parameters: rewritten, strict: true };
  return { parameters: schema, strict: fitsOpenAiStrictMode(schema) };
}

// OpenAI's strict mode (Structured Outputs) takes a subset of JSON Schema: the root an object, every object
// closed (additionalProperties: false) with every property required, no composition but anyOf (not at the
// root), `$ref` only to the schema's own definitions and without siblings, at most 10 levels of nesting and
// 5000 properties. A schema outside it is offered with strict: false (a strict converter such as the Agents
// SDK's makes optional parameters required and nullable; Toolgate reads their nulls as absent). String, number
// and array constraints are left to non-strict mode too: only some models honour them under strict.
const STRICT_UNSUPPORTED = new Set([
  'allOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'patternProperties',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'minContains',
  'maxContains',
  'prefixItems',
  'additionalItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  '$dynamicRef',
  '$recursiveRef',
  'contentSchema',
  '$data',
  'default',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);
const REF_SIBLINGS = new Set(['$ref', 'description', 'title', '$comment', 'examples', 'deprecated', 'readOnly', 'writeOnly']);
const MAX_STRICT_DEPTH = 10;
const MAX_STRICT_PROPERTIES = 5000;

export function fitsOpenAiStrictMode(root: JsonSchema): boolean {
  if (root.type !== 'object' || 'anyOf' in root) return false;
  let properties = 0;
  // Schemas only: the keys of `properties` and `$defs` are names, never keywords.
  const work: Array<[unknown, number]> = [[root, 1]];
  while (work.length > 0) {
    const [node, depth] = work.pop()!;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return false;
    const s = node as JsonSchema;
    if (depth > MAX_STRICT_DEPTH) return false;
    if (Object.keys(s).some((keyword) => STRICT_UNSUPPORTED.has(keyword))) return false;
    if (node !== root && '$id' in s) return false;
    if ('$ref' in s) {
      if (typeof s.$ref !== 'string' || !s.$ref.startsWith('#/') || Object.keys(s).some((k) => !REF_SIBLINGS.has(k))) return false;
      continue;
    }
    const types = Array.isArray(s.type) ? (s.type as unknown[]) : [s.type];
    if (types.includes('object') || 'properties' in s) {
      if (s.additionalProperties !== false) return false;
      const names = Object.keys((s.properties as object | undefined) ?? {});
      const required = new Set((s.required as string[] | undefined) ?? []);
      if (names.some((name) => !required.has(name))) return false;
      properties += names.length;
      if (properties > MAX_STRICT_PROPERTIES) return false;
      for (const child of Object.values((s.properties as object | undefined) ?? {})) work.push([child, depth + 1]);
    }
    if ('items' in s) work.push([s.items, depth + 1]);
    if ('anyOf' in s) {
      if (!Array.isArray(s.anyOf) || s.anyOf.length === 0) return false;
      for (const branch of s.anyOf) work.push([branch, depth + 1]);
    }
    for (const key of ['$defs', 'definitions']) {
      const defs = s[key];
      if (defs !== undefined) {
        if (typeof defs !== 'object' || defs === null) return false;
        for (const def of Object.values(defs)) work.push([def, depth]);
      }
    }
  }
  return true;
}
