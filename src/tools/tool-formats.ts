import type { ToolDefinition } from '../execution/tool-definition.js';
import { invalidToolFormat } from './tools.errors.js';
import type { JsonSchema } from '../execution/validation/schema-type.js';

export const TOOL_FORMATS = ['native', 'openai', 'anthropic', 'mcp'] as const;
export type ToolFormat = (typeof TOOL_FORMATS)[number];

export function parseToolFormat(value: string | undefined): ToolFormat {
  if (value === undefined || value === '') return 'native';
  if ((TOOL_FORMATS as readonly string[]).includes(value)) return value as ToolFormat;
  throw invalidToolFormat(value, TOOL_FORMATS);
}

// Each provider's own shape for a tool definition, so a client can hand the list straight to its model.
export function formatTool(tool: ToolDefinition, format: ToolFormat): Record<string, unknown> {
  switch (format) {
    case 'native':
      return { ...tool };
    case 'openai':
      return {
        type: 'function',
        function: {
          name: tool.name,
          description: tool.description,
          parameters: tool.inputSchema,
          strict: fitsOpenAiStrictMode(tool.inputSchema),
        },
      };
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

// OpenAI's strict mode needs every object closed (additionalProperties: false) with every property
// required, and rejects some keywords; a schema with optional parameters is offered with strict: false.
const STRICT_UNSUPPORTED = ['minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'minItems', 'maxItems', 'maxProperties', 'propertyNames'];

export function fitsOpenAiStrictMode(schema: JsonSchema): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    const s = node as JsonSchema;
    if (STRICT_UNSUPPORTED.some((k) => k in s)) return false;
    if (s.type === 'object') {
      if (s.additionalProperties !== false) return false;
      const properties = Object.keys((s.properties as object | undefined) ?? {});
      const required = (s.required as string[] | undefined) ?? [];
      if (properties.some((p) => !required.includes(p))) return false;
    }
    stack.push(...Object.values(s).filter((v) => typeof v === 'object'));
  }
  return true;
}
