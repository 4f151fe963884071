import { Injectable } from '@nestjs/common';
import type { ToolAnnotations, ToolDefinition } from '../execution/tool-definition.js';
import { createToolAjv, type ToolAjv } from '../execution/validation/ajv-factory.js';
import type { JsonSchema } from '../execution/validation/schema-type.js';
import { type CompiledToolValidator, compileToolValidator } from '../execution/validation/tool-validator.js';
import { describeAjvErrors } from '../execution/validation/validation-message.js';
import { TemplateRefusal, vetArgvTemplate } from './executors/argv-template.js';
import type { SkillExecutorSpec } from './executors/executor-specs.js';
import { createTenantAjv, SchemaRefusal, vetSchema, vetSchemaShape } from './schema-vetting.js';
import { SKILL_BODY_SCHEMA } from './skill-body.schema.js';
import { invalidSkill, schemaRefused } from './skills.errors.js';
import { SKILL_TOOL_DEFAULT_TIMEOUT_MS } from './skills.limits.js';
import type { DefinitionPin } from './definitions/definition-pin.js';

export interface SkillToolSpec {
  name: string;
  // A display name for people (MCP's `title`).
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  executor: SkillExecutorSpec;
  timeoutMs?: number;
  mode?: 'async' | 'sync';
  annotations?: Partial<ToolAnnotations>;
  // Set by Toolgate, never by a body: what was reviewed (src/skills/review).
  pin?: DefinitionPin;
  // Not served until an admin reviews it: a first import the description rules flagged, or an upstream
  // change to its input schema that the pinned definition's callers would break on.
  withheld?: 'flagged' | 'incompatible_change';
}

export interface SkillBody {
  name: string;
  version: string;
  description: string;
  tools: SkillToolSpec[];
}

export interface CompiledSkillTool {
  definition: ToolDefinition;
  spec: SkillToolSpec;
  validator: CompiledToolValidator;
}

// Checks a registration body and compiles its tools: the envelope against SKILL_BODY_SCHEMA, every
// tenant schema vetted (schema-vetting.ts) and compiled on an Ajv of its own, so one tenant's `$id`s
// never meet another's. Compiled skills are kept by id and version; nothing compiles per call.
@Injectable()
export class SkillCompiler {
  private readonly checkBody = createToolAjv().compile(SKILL_BODY_SCHEMA);
  private readonly compiled = new Map<string, CompiledSkillTool[]>();

  parseBody(body: unknown): SkillBody {
    if (!this.checkBody(body)) {
      const { issues } = describeAjvErrors(this.checkBody.errors ?? [], SKILL_BODY_SCHEMA);
      throw invalidSkill(issues.map((i) => i.message).join('; '), issues);
    }
    // A body with an MCP `source` has no tools yet: SkillsService imports them, then parses again.
    const skill = body as SkillBody;
    const seen = new Set<string>();
    for (const tool of skill.tools ?? []) {
      if (seen.has(tool.name)) throw invalidSkill(`the tool name '${tool.name}' appears twice`);
      seen.add(tool.name);
    }
    return skill;
  }

  // Vets, then builds, without keeping anything: a refused skill leaves no trace. On the event loop: a
  // registration vets in the worker pool instead (vetSkillTools there, then build here).
  vet(skill: SkillBody, source: string): CompiledSkillTool[] {
    vetSkillTools(skill.tools);
    return this.build(skill, source);
  }

  // The tools of a skill already vetted: their definitions now, each input validator compiled on its tool's
  // first call (compiling every schema of a large skill costs about 5 ms a schema, half a second for 100).
  build(skill: SkillBody, source: string): CompiledSkillTool[] {
    const ajv = createTenantAjv();
    return skill.tools.map((tool) => buildTool(ajv, tool, source));
  }

  // For a skill loaded from the database (first use after a restart); its schemas were vetted at registration.
  // `revision` names the stored tools: a reviewed change replaces them without a new version.
  load(skillId: string, revision: string, skill: SkillBody, source: string): CompiledSkillTool[] {
    let tools = this.compiled.get(`${skillId}@${revision}`);
    if (!tools) {
      tools = this.build(skill, source);
      this.remember(skillId, revision, tools);
    }
    return tools;
  }

  // One revision per skill is kept: the others are what it was before.
  remember(skillId: string, revision: string, tools: CompiledSkillTool[]): void {
    this.forget(skillId);
    this.compiled.set(`${skillId}@${revision}`, tools);
  }

  forget(skillId: string): void {
    for (const key of this.compiled.keys()) if (key.startsWith(`${skillId}@`)) this.compiled.delete(key);
  }
}

// Every check of a skill's tools that needs Ajv: each schema vetted (schema-vetting.ts) and compiled once on
// an Ajv of the skill's own, each command's argv template checked against its input schema. Throws the
// refusal (an AppError). Runs in a worker thread at registration (task vetSkill), or on the caller's thread.
export function vetSkillTools(tools: SkillToolSpec[]): void {
  const ajv = createTenantAjv();
  for (const tool of tools) vetTool(ajv, tool);
}

// The cheap part of vetting, on the caller's thread before anything serialises the tools (the size cap, the
// copy to a worker): a 10,000-level schema is refused here instead of overflowing the stack there.
export function vetSkillShapes(tools: SkillToolSpec[]): void {
  for (const tool of tools) {
    for (const schema of ['inputSchema', 'outputSchema'] as const) {
      try {
        vetSchemaShape(tool[schema]);
      } catch (error) {
        if (error instanceof SchemaRefusal) throw schemaRefused(tool.name, schema, error.location, error.reason);
        throw error;
      }
    }
  }
}

function vetTool(ajv: ToolAjv, tool: SkillToolSpec): void {
  const refused = (schema: 'inputSchema' | 'outputSchema' | 'executor', error: unknown): never => {
    if (error instanceof SchemaRefusal || error instanceof TemplateRefusal)
      throw schemaRefused(tool.name, schema, error.location, error.reason);
    throw error;
  };
  let inputSchema: JsonSchema;
  try {
    inputSchema = vetSchema(tool.inputSchema, ajv, 'input');
  } catch (error) {
    return refused('inputSchema', error);
  }
  if (tool.outputSchema !== undefined) {
    try {
      vetSchema(tool.outputSchema, ajv, 'output');
    } catch (error) {
      refused('outputSchema', error);
    }
  }
  if (
    tool.executor.type === 'http' &&
    tool.executor.auth &&
    Object.keys(tool.executor.headers ?? {}).some((name) => name.toLowerCase() === 'authorization')
  ) {
    throw invalidSkill(`Tool '${tool.name}': an http executor with auth sends its own Authorization header; remove the one in headers`);
  }
  if (tool.executor.type === 'command') {
    try {
      vetArgvTemplate(tool.executor.argv, inputSchema);
    } catch (error) {
      refused('executor', error);
    }
  }
}

function buildTool(ajv: ToolAjv, tool: SkillToolSpec, source: string): CompiledSkillTool {
  const inputSchema = tool.inputSchema;
  const definition: ToolDefinition = {
    name: tool.name,
    description: tool.description,
    inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.title ? { title: tool.title } : {}),
    annotations: skillAnnotations(tool),
    timeoutMs: tool.timeoutMs ?? SKILL_TOOL_DEFAULT_TIMEOUT_MS,
    source,
  };
  return { definition, spec: tool, validator: compileToolValidator(ajv, tool.name, inputSchema, { lazy: true }) };
}

// MCP's meaning of the hints: a read-only tool is never destructive (destructiveHint only means something
// when readOnlyHint is false), and a tool that reaches the network (http, MCP sources) is open-world.
function skillAnnotations(tool: SkillToolSpec): ToolAnnotations {
  const readOnly = tool.annotations?.readOnly ?? false;
  return {
    readOnly,
    destructive: readOnly ? false : (tool.annotations?.destructive ?? true),
    idempotent: tool.annotations?.idempotent ?? false,
    openWorld: tool.annotations?.openWorld ?? tool.executor.type !== 'command',
  };
}
