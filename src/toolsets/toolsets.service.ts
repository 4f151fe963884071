import path from 'node:path';
import { Injectable } from '@nestjs/common';
import { createToolAjv } from '../execution/validation/ajv-factory.js';
import { describeAjvErrors } from '../execution/validation/validation-message.js';
import type { JsonSchema } from '../execution/validation/schema-type.js';
import { toolNotFound } from '../execution/validation/name-suggestions.js';
import { UNIQUE_TAKEN } from '../database/unique-violation.js';
import type { Prisma } from '../generated/prisma/client.js';
import { projectNotFound } from '../projects/projects.errors.js';
import { createTenantAjv } from '../skills/schema-vetting.js';
import { skillSource } from '../skills/skill-tools.js';
import { type LockedProject, NO_PROJECT, SkillsRepository } from '../skills/skills.repository.js';
import { type ToolNameClaim, ToolNameClaims } from '../skills/tool-name-claims.js';
import { FILE_TOOLS } from '../tools/builtin-file-paths.js';
import { BUILTIN_TOOL_NAMES } from '../execution/builtin-tool-names.js';
import { TOOL_CLASSES } from '../tools/tool-classes.js';
import { type RegisteredTool, ToolRegistry } from '../tools/tool-registry.js';
import { type ToolsetBodyDto, ToolsetListResponseDto, ToolsetResponseDto } from './dto/toolset.dto.js';
import { ApiKeysService } from '../tenants/api-keys.service.js';
import { BudgetsRepository } from '../budgets/budgets.repository.js';
import { TenantBudgets } from '../budgets/tenant-budgets.js';
import { ToolsetCatalogues } from './toolset-catalogues.js';
import { RESERVED_NAMES, selectsOneTool } from './toolset-view.js';
import {
  type ExposedNameCollision,
  exposedNameCollision,
  invalidToolset,
  tooManyToolsets,
  toolsetTooLarge,
  toolsetNotFound,
  toolsetSlugTaken,
} from './toolsets.errors.js';
import { type ToolsetEntry, type ToolsetFields, type ToolsetRecord, ToolsetsRepository } from './toolsets.repository.js';

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const TOOL_PREFIX = /^[a-zA-Z0-9_-]{0,64}\*$/;
const ENTRY_FIELDS = ['select', 'name', 'title', 'description', 'fixedArguments', 'pathPrefix'];
const MAX_DESCRIPTION = 4096;
const MAX_TITLE = 200;
// Toolsets one project may have; a tenant has at most its maxToolsets budget of them in all its projects,
// and each is at most TOOLSET_MAX_BYTES as stored. Without a count, one tenant's toolsets grew the database
// by 76 MB a minute; with a count per project only, 100 projects of 50 toolsets of 1 MiB each let it keep 5 GB.
export const MAX_TOOLSETS_PER_PROJECT = 50;
export const TOOLSET_MAX_BYTES = 256 * 1024;

// Toolsets of a project, managed by admin keys: each entry is checked against the project's tools as they
// are now, so a rename cannot take a name the project already uses and fixed arguments fit the tool. A
// toolset is written under the project's lock, which enabling a skill takes too, and the names it gives by
// renaming are claims a skill's tool may not take later (ToolNameClaims): a rename and a skill's tool never
// come to share a name, whichever comes first.
@Injectable()
export class ToolsetsService {
  constructor(
    private readonly repository: ToolsetsRepository,
    private readonly registry: ToolRegistry,
    private readonly catalogues: ToolsetCatalogues,
    private readonly keys: ApiKeysService,
    private readonly skills: SkillsRepository,
    private readonly budgetLocks: BudgetsRepository,
    private readonly budgets: TenantBudgets,
    claims: ToolNameClaims,
  ) {
    claims.register(async (tx, tenantId, projectId) => (await this.repository.listForProject(tenantId, projectId, tx)).flatMap(claimsOf));
  }

  async create(tenantId: string, projectId: string, body: ToolsetBodyDto): Promise<ToolsetResponseDto> {
    const { tools } = await this.registry.forProject(tenantId, projectId);
    const fields = checkToolset(body, tools);
    // Counted under the tenant's lock, then the project's: two creations at once, on any instance and in any
    // of its projects, cannot both take the last place.
    const record = await this.budgetLocks.withTenantLocked(tenantId, async (within, overrides) => {
      const count = await this.repository.countForTenant(tenantId, within);
      const advice = 'Delete a toolset the tenant no longer needs (in any of its projects), or ask the operator for a larger budget.';
      const refusal = this.budgets.refusalForOneMore(overrides, 'maxToolsets', count, advice);
      if (refusal) throw refusal;
      return this.locked(
        tenantId,
        projectId,
        fields,
        async (tx) => {
          if ((await this.repository.countForProject(tenantId, projectId, tx)) >= MAX_TOOLSETS_PER_PROJECT) {
            throw tooManyToolsets(MAX_TOOLSETS_PER_PROJECT);
          }
          const created = await this.repository.create(tenantId, projectId, fields, tx);
          if (created === UNIQUE_TAKEN) throw toolsetSlugTaken(fields.slug);
          return created;
        },
        within,
      );
    });
    if (record === false) throw projectNotFound(projectId);
    this.catalogues.changed(tenantId, projectId);
    return this.respond(record, tools);
  }

  async list(tenantId: string, projectId: string): Promise<ToolsetListResponseDto> {
    const { tools } = await this.registry.forProject(tenantId, projectId);
    const records = await this.repository.listForProject(tenantId, projectId);
    return { items: records.map((r) => this.respond(r, tools)) };
  }

  async get(tenantId: string, projectId: string, slug: string): Promise<ToolsetResponseDto> {
    const { tools } = await this.registry.forProject(tenantId, projectId);
    const record = await this.repository.findBySlug(tenantId, projectId, slug);
    if (!record) throw toolsetNotFound(slug);
    return this.respond(record, tools);
  }

  async replace(tenantId: string, projectId: string, slug: string, body: ToolsetBodyDto): Promise<ToolsetResponseDto> {
    const { tools } = await this.registry.forProject(tenantId, projectId);
    const fields = checkToolset(body, tools);
    const record = await this.locked(tenantId, projectId, fields, async (tx) => {
      const replaced = await this.repository.replace(tenantId, projectId, slug, fields, tx);
      if (replaced === null) throw toolsetNotFound(slug);
      if (replaced === UNIQUE_TAKEN) throw toolsetSlugTaken(fields.slug);
      return replaced;
    });
    this.catalogues.changed(tenantId, projectId);
    // A new slug is a new URL: what was bound to the old one (keys, OAuth consents) ends, as on delete, so a
    // toolset made later under the old slug does not hand it whatever that one serves.
    if (fields.slug !== slug) await this.keys.revokeBoundToToolset(tenantId, projectId, slug);
    return this.respond(record, tools);
  }

  async delete(tenantId: string, projectId: string, slug: string): Promise<void> {
    await this.registry.forProject(tenantId, projectId);
    if (!(await this.repository.delete(tenantId, projectId, slug))) throw toolsetNotFound(slug);
    this.catalogues.changed(tenantId, projectId);
    await this.keys.revokeBoundToToolset(tenantId, projectId, slug);
  }

  // Writes the toolset holding the project's lock, once its renames are checked against the names the project
  // uses then (the built-ins, every tool of its enabled skills, withheld ones included).
  private async locked(
    tenantId: string,
    projectId: string,
    fields: ToolsetFields,
    write: (tx: Prisma.TransactionClient) => Promise<ToolsetRecord>,
    within?: Prisma.TransactionClient,
  ): Promise<ToolsetRecord> {
    const record = await this.skills.withLockedProject(
      tenantId,
      projectId,
      async (project) => {
        checkNames(fields.tools, await namesInUse(project));
        return write(project.tx);
      },
      within,
    );
    if (record === NO_PROJECT) throw projectNotFound(projectId);
    return record;
  }

  private respond(record: ToolsetRecord, tools: readonly RegisteredTool[]): ToolsetResponseDto {
    return ToolsetResponseDto.from(
      record,
      this.catalogues.view(record, tools).served.map((d) => d.name),
    );
  }
}

// The body as it will be stored, or the refusal that names the entry and what is wrong with it.
function checkToolset(body: ToolsetBodyDto, tools: readonly RegisteredTool[]): ToolsetFields {
  if (body.tools.length === 0) throw invalidToolset('tools must select at least one tool');
  const entries = body.tools.map((entry, index) => checkEntry(entry, index, tools));
  const bytes = Buffer.byteLength(JSON.stringify(entries));
  if (bytes > TOOLSET_MAX_BYTES) throw toolsetTooLarge(bytes, TOOLSET_MAX_BYTES);
  return { slug: body.slug, name: body.name, mode: body.mode, tools: entries };
}

function checkEntry(raw: ToolsetEntry, index: number, tools: readonly RegisteredTool[]): ToolsetEntry {
  const at = `tools[${index}]`;
  const unknown = Object.keys(raw).filter((k) => !ENTRY_FIELDS.includes(k));
  if (unknown.length > 0)
    throw invalidToolset(`${at} has unknown field(s) ${unknown.join(', ')}; an entry takes ${ENTRY_FIELDS.join(', ')}`);
  const { select } = raw;
  if (
    typeof select !== 'string' ||
    !(TOOL_NAME.test(select) || TOOL_PREFIX.test(select) || (TOOL_CLASSES as readonly string[]).includes(select))
  ) {
    throw invalidToolset(`${at}.select must be a tool name, a name ending in * or one of ${TOOL_CLASSES.join(', ')}`);
  }
  const overrides = ENTRY_FIELDS.filter((k) => k !== 'select' && raw[k as keyof ToolsetEntry] !== undefined);
  if (!selectsOneTool(select)) {
    if (overrides.length > 0)
      throw invalidToolset(`${at}: ${overrides.join(', ')} apply to a single tool, and '${select}' selects several; give the tool's name`);
    return { select };
  }
  const tool = tools.find((t) => t.executor.definition.name === select);
  if (!tool)
    throw invalidToolset(
      toolNotFound(
        select,
        tools.map((t) => t.executor.definition.name),
      ).message,
      { entry: index },
    );
  const entry: ToolsetEntry = { select };
  if (raw.name !== undefined) {
    if (typeof raw.name !== 'string' || !TOOL_NAME.test(raw.name))
      throw invalidToolset(`${at}.name must match ^[a-zA-Z0-9_-]{1,64}$ (what model providers accept)`);
    entry.name = raw.name;
  }
  if (raw.title !== undefined) entry.title = checkText(raw.title, `${at}.title`, MAX_TITLE);
  if (raw.description !== undefined) entry.description = checkText(raw.description, `${at}.description`, MAX_DESCRIPTION);
  if (raw.fixedArguments !== undefined) entry.fixedArguments = checkFixed(raw.fixedArguments, `${at}.fixedArguments`, tool);
  if (raw.pathPrefix !== undefined) {
    // The tools whose path arguments a pathPrefix confines (every path they take is resolved in that directory).
    if (!FILE_TOOLS.includes(select) || tool.executor.definition.source !== 'builtin') {
      throw invalidToolset(`${at}.pathPrefix confines a file tool's paths; ${select} is not one (${FILE_TOOLS.join(', ')})`);
    }
    entry.pathPrefix = checkPrefix(raw.pathPrefix, `${at}.pathPrefix`);
  }
  return entry;
}

function checkText(value: unknown, at: string, max: number): string {
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > max)
    throw invalidToolset(`${at} must be a non-empty string of at most ${max} characters`);
  return value;
}

// Each fixed argument must be one of the tool's parameters, with a value its schema accepts.
function checkFixed(value: unknown, at: string, tool: RegisteredTool): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length === 0) {
    throw invalidToolset(`${at} must be an object of one or more of the tool's arguments`);
  }
  const schema = tool.validator.inputSchema;
  const properties = Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {});
  const unknown = Object.keys(value).filter((k) => !properties.includes(k));
  if (unknown.length > 0)
    throw invalidToolset(`${at}: ${unknown.join(', ')} is not a parameter of ${tool.executor.definition.name} (${properties.join(', ')})`);
  // The fixed values alone against the tool's schema, with nothing required: a wrong type or value is named.
  const partial: JsonSchema = { ...schema, required: [] };
  delete partial.$id;
  const ajv = tool.executor.definition.source === 'builtin' ? createToolAjv() : createTenantAjv();
  const check = ajv.compile(partial);
  if (!check(value)) {
    const { issues } = describeAjvErrors(check.errors ?? [], partial);
    throw invalidToolset(`${at} does not fit ${tool.executor.definition.name}: ${issues.map((i) => i.message).join('; ')}`);
  }
  return value as Record<string, unknown>;
}

// A directory of the workspace, relative and normalized: no `..`, no absolute path, no control characters.
function checkPrefix(value: unknown, at: string): string {
  if (typeof value !== 'string') throw invalidToolset(`${at} must be a directory relative to the workspace, e.g. "docs"`);
  const trimmed = value.replace(/\/+$/, '');
  const valid =
    trimmed.length > 0 &&
    trimmed.length <= 1024 &&
    !trimmed.startsWith('/') &&
    !/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069\\]/.test(trimmed) &&
    path.posix.normalize(trimmed) === trimmed &&
    !trimmed.split('/').some((s) => s === '..' || s === '.' || s === '');
  if (!valid)
    throw invalidToolset(`${at} must be a directory relative to the workspace without '..', '.', '//' or control characters, e.g. "docs"`);
  return trimmed;
}

// What a name of the project is taken by: the built-ins, or the skill whose tool it is.
async function namesInUse(project: LockedProject): Promise<Map<string, string>> {
  const taken = new Map(BUILTIN_TOOL_NAMES.map((name) => [name, 'the built-in tools']));
  for (const skill of await project.enabledSkills()) for (const tool of skill.tools) taken.set(tool.name, skillSource(skill));
  return taken;
}

// The names the model will see must be unique, and a rename must not take a name the project already uses
// for another tool (a built-in or a skill's), as a skill's tool may not (tool_name_collision).
function checkNames(entries: readonly ToolsetEntry[], taken: ReadonlyMap<string, string>): void {
  const collisions: ExposedNameCollision[] = [];
  const seen = new Map<string, number>();
  entries.forEach((entry, index) => {
    if (!selectsOneTool(entry.select)) return;
    const name = entry.name ?? entry.select;
    if (RESERVED_NAMES.includes(name)) collisions.push({ tool: name, conflictsWith: "one of a toolset's own tools (search mode)" });
    const holder = name !== entry.select ? taken.get(name) : undefined;
    if (holder) collisions.push({ tool: name, conflictsWith: `provided by ${holder}` });
    const earlier = seen.get(name);
    if (earlier !== undefined) collisions.push({ tool: name, conflictsWith: `the name of tools[${earlier}]` });
    else seen.set(name, index);
  });
  if (collisions.length > 0) throw exposedNameCollision(collisions);
}

// The names a toolset holds: each one it shows a tool under instead of the tool's own.
function claimsOf(record: ToolsetRecord): ToolNameClaim[] {
  return record.tools
    .filter((entry) => selectsOneTool(entry.select) && entry.name !== undefined && entry.name !== entry.select)
    .map((entry) => ({ name: entry.name!, heldBy: `toolset:${record.slug}`, tool: entry.select }));
}
