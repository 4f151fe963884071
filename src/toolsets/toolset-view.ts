import type { ToolDefinition, ToolExecutor } from '../execution/tool-definition.js';
import { createToolAjv, type ToolAjv } from '../execution/validation/ajv-factory.js';
import type { JsonSchema } from '../execution/validation/schema-type.js';
import { type CompiledToolValidator, compileToolValidator } from '../execution/validation/tool-validator.js';
import { toolNotFound } from '../execution/validation/name-suggestions.js';
import { createTenantAjv } from '../skills/schema-vetting.js';
import { FILE_TOOL_PATH_PARAMETERS } from '../tools/builtin-file-paths.js';
import type { ToolRenames } from '../tools/exposed-texts.js';
import { approvalEntryCovers, TOOLSET_SOURCE } from '../tools/tool-classes.js';
import type { ExposedTool, ToolView } from '../tools/tool-catalogue.js';
import type { RegisteredTool } from '../tools/tool-registry.js';
import { ToolSearchIndex } from './tool-search.js';
import type { ToolsetEntry, ToolsetRecord } from './toolsets.repository.js';

export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';
// Names a toolset keeps for itself (search mode's two tools), in either mode so a toolset can switch.
export const RESERVED_NAMES: readonly string[] = [SEARCH_TOOLS, CALL_TOOL];
export const SEARCH_DEFAULT_LIMIT = 5;
export const SEARCH_MAX_LIMIT = 20;

// A tool name alone, as opposed to a name ending in `*` or a class: only such an entry may rename or adjust.
export const selectsOneTool = (select: string) => !select.endsWith('*') && !select.startsWith('@');

// A definition as a toolset shows it: ToolDefinition plus the title MCP clients display.
export interface ExposedDefinition extends ToolDefinition {
  title?: string;
}

interface Exposed extends ExposedTool {
  readonly definition: ExposedDefinition;
}

// The schema the model sees: the fixed arguments are gone from it (properties and required).
export function withoutFixed(schema: JsonSchema, fixed: Readonly<Record<string, unknown>> | null): JsonSchema {
  if (fixed === null) return schema;
  const names = Object.keys(fixed);
  const properties = { ...((schema.properties as Record<string, unknown> | undefined) ?? {}) };
  for (const name of names) delete properties[name];
  const required = ((schema.required as string[] | undefined) ?? []).filter((name) => !names.includes(name));
  const { required: _required, ...rest } = schema;
  return { ...rest, properties, ...(required.length > 0 ? { required } : {}) };
}

// Under a pathPrefix the model's paths are relative to that directory, not to the workspace: the path
// parameters' descriptions say so (the directory itself is not named, lest the model repeat it in its paths).
export function withPrefixedPaths(schema: JsonSchema, tool: string): JsonSchema {
  const names = FILE_TOOL_PATH_PARAMETERS[tool] ?? [];
  const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
  const described = { ...properties };
  for (const name of names) {
    const property = properties[name];
    if (!property) continue;
    described[name] = relativeToPrefix(property);
    const items = property.items as JsonSchema | undefined;
    if (items && typeof items === 'object' && !Array.isArray(items))
      described[name] = { ...described[name], items: relativeToPrefix(items) };
  }
  return { ...schema, properties: described };
}

const relativeToPrefix = (property: JsonSchema): JsonSchema =>
  typeof property.description === 'string'
    ? { ...property, description: property.description.replace(/\bthe (?:project )?workspace\b/g, "the tool's root directory") }
    : property;

const isSkillTool = (tool: RegisteredTool) => tool.executor.definition.source.startsWith('skill:');

// One toolset over one tool list (the project's, as the asking key may see it): built once per pair and
// kept with them (ToolsetCatalogues), so validators compile and the search index builds once per change.
export class ToolsetView implements ToolView {
  readonly definitions: readonly ExposedDefinition[];
  readonly renames: ToolRenames;
  private readonly exposed = new Map<string, Exposed>();
  private readonly search: Exposed | null = null;
  private readonly callTool: CompiledToolValidator | null = null;
  private index: Promise<ToolSearchIndex> | null = null;
  // Exposed schemas compile on Ajv instances of this view alone (a skill's on a tenant Ajv, as at registration).
  private builtinAjv: ToolAjv | null = null;
  private skillAjv: ToolAjv | null = null;

  constructor(
    readonly record: ToolsetRecord,
    tools: readonly RegisteredTool[],
  ) {
    const named = new Set<string>();
    for (const entry of record.tools) {
      if (!selectsOneTool(entry.select)) continue;
      named.add(entry.select);
      const tool = tools.find((t) => t.executor.definition.name === entry.select);
      // A tool that left the project (a skill disabled) or that the key may not use is not served.
      if (tool) this.add(entry.name ?? entry.select, tool, entry);
    }
    // Wildcards and classes add the tools no entry of their own names, under their own names.
    for (const entry of record.tools) {
      if (selectsOneTool(entry.select)) continue;
      for (const tool of tools) {
        const name = tool.executor.definition.name;
        if (!named.has(name) && approvalEntryCovers(entry.select, tool.executor)) this.add(name, tool, null);
      }
    }
    this.renames = renamesOf([...this.exposed.values()]);
    if (record.mode === 'search') {
      this.search = this.searchTool();
      this.callTool = createCallToolValidator();
      this.definitions = [this.search.definition, CALL_TOOL_DEFINITION];
    } else {
      this.definitions = [...this.exposed.values()].map((e) => e.definition);
    }
  }

  // Every tool the toolset serves, search mode's hidden ones included.
  get served(): readonly ExposedDefinition[] {
    return [...this.exposed.values()].map((e) => e.definition);
  }

  find(name: string): ExposedTool {
    if (this.search && name === SEARCH_TOOLS) return this.search;
    const exposed = this.exposed.get(name);
    if (!exposed)
      throw toolNotFound(name, [...this.definitions.map((d) => d.name), ...(this.search ? this.exposed.keys() : [])], 'this toolset');
    return exposed;
  }

  dispatch(name: string, args: unknown): { name: string; arguments: unknown } | null {
    if (!this.callTool || name !== CALL_TOOL) return null;
    const call = this.callTool.parse(args) as { name: string; arguments?: unknown };
    return { name: call.name, arguments: call.arguments ?? {} };
  }

  // The best matches of a query among the served tools, with the schemas the model would call them with.
  async searchTools(query: string, limit: number): Promise<{ tools: Record<string, unknown>[]; total: number }> {
    this.index ??= ToolSearchIndex.build(this.served);
    const hits = (await this.index).search(query);
    const tools = hits.slice(0, limit).map((name) => {
      const d = this.exposed.get(name)!.definition;
      return { name: d.name, ...(d.title ? { title: d.title } : {}), description: d.description, inputSchema: d.inputSchema };
    });
    return { tools, total: hits.length };
  }

  private add(name: string, tool: RegisteredTool, entry: ToolsetEntry | null): void {
    // The first claim on a name wins: a tool's own entry before wildcards, an earlier entry before a later.
    if (this.exposed.has(name) || RESERVED_NAMES.includes(name)) return;
    const real = tool.executor.definition;
    const fixed = entry?.fixedArguments ?? null;
    const prefix = entry?.pathPrefix ?? null;
    const inputSchema =
      prefix === null ? withoutFixed(real.inputSchema, fixed) : withPrefixedPaths(withoutFixed(real.inputSchema, fixed), real.name);
    const definition: ExposedDefinition = {
      ...real,
      name,
      description: entry?.description ?? real.description,
      inputSchema,
      ...(entry?.title !== undefined ? { title: entry.title } : {}),
    };
    // A tool shown under its own name with all its parameters validates as itself (descriptions aside, which
    // a pathPrefix changes, the schema is its own).
    const validator = name === real.name && fixed === null ? tool.validator : this.compile(tool, name, inputSchema);
    this.exposed.set(name, { name, tool, validator, fixedArguments: fixed, pathPrefix: prefix, definition });
  }

  private compile(tool: RegisteredTool, name: string, schema: JsonSchema): CompiledToolValidator {
    const ajv = isSkillTool(tool) ? (this.skillAjv ??= createTenantAjv()) : (this.builtinAjv ??= createToolAjv());
    return compileToolValidator(ajv, name, schema);
  }

  private searchTool(): Exposed {
    const definition: ExposedDefinition = {
      name: SEARCH_TOOLS,
      description: `Find the tools for a task among the ${this.exposed.size} tools of this toolset. Answers the best matches with their input schemas; call one with ${CALL_TOOL}.`,
      inputSchema: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            minLength: 1,
            maxLength: 500,
            description: 'What you want to do, in a few words (e.g. "create a github issue")',
          },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: SEARCH_MAX_LIMIT,
            description: `Most tools to answer (default ${SEARCH_DEFAULT_LIMIT})`,
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
      annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
      timeoutMs: 5_000,
      source: TOOLSET_SOURCE,
    };
    const executor: ToolExecutor<{ query: string; limit?: number }> = {
      definition,
      execute: (args) => this.searchTools(args.query, args.limit ?? SEARCH_DEFAULT_LIMIT),
    };
    const validator = compileToolValidator((this.builtinAjv ??= createToolAjv()), SEARCH_TOOLS, definition.inputSchema);
    const tool: RegisteredTool = { executor: executor, validator };
    return { name: SEARCH_TOOLS, tool, validator, fixedArguments: null, pathPrefix: null, definition };
  }
}

// Each real tool the toolset shows under one name only, and not its own.
function renamesOf(exposed: readonly Exposed[]): ToolRenames {
  const shownAs = new Map<string, string[]>();
  for (const { name, tool } of exposed) {
    const real = tool.executor.definition.name;
    shownAs.set(real, [...(shownAs.get(real) ?? []), name]);
  }
  const renames = new Map<string, string>();
  for (const [real, names] of shownAs) if (names.length === 1 && names[0] !== real) renames.set(real, names[0]);
  return renames;
}

const CALL_TOOL_DEFINITION: ExposedDefinition = {
  name: CALL_TOOL,
  description: `Call a tool that ${SEARCH_TOOLS} found, by its name, with arguments that fit its input schema.`,
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 128, description: `The tool's name, as ${SEARCH_TOOLS} answered it` },
      arguments: { type: 'object', description: "The tool's arguments, as its input schema asks" },
    },
    required: ['name'],
    additionalProperties: false,
  },
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
  timeoutMs: 600_000,
  source: TOOLSET_SOURCE,
};

let callToolValidator: CompiledToolValidator | null = null;
const createCallToolValidator = () =>
  (callToolValidator ??= compileToolValidator(createToolAjv(), CALL_TOOL, CALL_TOOL_DEFINITION.inputSchema));
