import { keyMayUseTool } from '../common/auth/key-roles.js';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { type SkillTool, SkillTools } from '../skills/skill-tools.js';
import { ProjectAccess, type ProjectSettings } from '../projects/project-access.js';
import { DeleteFileExecutor } from './executors/delete-file.executor.js';
import { EditFileExecutor } from './executors/edit-file.executor.js';
import { MoveFileExecutor } from './executors/move-file.executor.js';
import { ReadMultipleFilesExecutor } from './executors/read-multiple-files.executor.js';
import { SearchFilesExecutor } from './executors/search-files.executor.js';
import { FetchUrlExecutor } from './executors/fetch-url.executor.js';
import { ListFilesExecutor } from './executors/list-files.executor.js';
import { ReadFileExecutor } from './executors/read-file.executor.js';
import { ShellExecExecutor } from './executors/shell-exec.executor.js';
import { WriteFileExecutor } from './executors/write-file.executor.js';
import { FILE_TOOL_PATH_PARAMETERS } from './builtin-file-paths.js';
import { BUILTIN_TOOL_NAMES } from '../execution/builtin-tool-names.js';
import type { ToolExecutor } from '../execution/tool-definition.js';
import { toolNotFound } from '../execution/validation/name-suggestions.js';
import { type CompiledToolValidator, ToolValidatorCache } from '../execution/validation/tool-validator.js';

export interface RegisteredTool {
  executor: ToolExecutor;
  validator: CompiledToolValidator;
}

// Restricted views of a tool list, by the list (weakly: they go with it) and the key's binding.
const restricted = new WeakMap<readonly RegisteredTool[], Map<string, readonly RegisteredTool[]>>();

export interface ProjectTools {
  settings: ProjectSettings;
  // Shared between requests (and keyed on by the listing cache): never mutate it.
  tools: readonly RegisteredTool[];
}

// The tools a project can use. Built-in validators are compiled once at start-up; the request path
// only looks them up. A project's settings come from ProjectAccess's cache, its skill tools from SkillTools'.
@Injectable()
export class ToolRegistry implements OnModuleInit {
  private readonly builtins: ToolExecutor[];
  private readonly validators = new ToolValidatorCache();
  private compiled: readonly RegisteredTool[] = [];
  // One built-ins-plus-skills array per skill-tool array that SkillTools caches, so a project's tool list
  // keeps its identity until its skills change. Weak: it lives exactly as long as SkillTools keeps the key.
  private readonly withSkills = new WeakMap<readonly SkillTool[], readonly RegisteredTool[]>();

  constructor(
    private readonly projects: ProjectAccess,
    private readonly skillTools: SkillTools,
    readFile: ReadFileExecutor,
    writeFile: WriteFileExecutor,
    listFiles: ListFilesExecutor,
    deleteFile: DeleteFileExecutor,
    shellExec: ShellExecExecutor,
    fetchUrl: FetchUrlExecutor,
    editFile: EditFileExecutor,
    searchFiles: SearchFilesExecutor,
    moveFile: MoveFileExecutor,
    readMultipleFiles: ReadMultipleFilesExecutor,
  ) {
    this.builtins = [
      readFile,
      writeFile,
      listFiles,
      deleteFile,
      shellExec,
      fetchUrl,
      editFile,
      searchFiles,
      moveFile,
      readMultipleFiles,
    ] as ToolExecutor[];
  }

  onModuleInit(): void {
    const names = this.builtins.map((b) => b.definition.name);
    if (names.join() !== BUILTIN_TOOL_NAMES.join()) {
      throw new Error(`BUILTIN_TOOL_NAMES (${BUILTIN_TOOL_NAMES.join(', ')}) does not match the executors (${names.join(', ')})`);
    }
    for (const [tool, parameters] of Object.entries(FILE_TOOL_PATH_PARAMETERS)) {
      const properties = this.builtins.find((b) => b.definition.name === tool)?.definition.inputSchema.properties as
        Record<string, unknown> | undefined;
      const missing = parameters.filter((name) => !properties?.[name]);
      if (missing.length > 0) throw new Error(`FILE_TOOL_PATH_PARAMETERS names ${missing.join(', ')} of ${tool}, which it does not take`);
    }
    this.compiled = this.builtins.map((executor) => ({
      executor,
      validator: this.validators.getOrCompile(
        `builtin:${executor.definition.name}`,
        executor.definition.name,
        executor.definition.inputSchema,
      ),
    }));
  }

  async forProject(tenantId: string, projectId: string): Promise<ProjectTools> {
    const settings = await this.projects.settings(tenantId, projectId);
    const skillTools = await this.skillTools.forProject(tenantId, projectId);
    return { settings, tools: this.toolsWith(skillTools) };
  }

  async find(tenantId: string, projectId: string, toolName: string): Promise<RegisteredTool> {
    return ToolRegistry.pick(await this.forProject(tenantId, projectId), toolName);
  }

  // The project's tools as a key bound to `allowed` sees them (null: all). The same array object for the
  // same tool list and binding, so listings cached by array stay cached per binding.
  static restrict(project: ProjectTools, allowed: readonly string[] | null): ProjectTools {
    if (allowed === null) return project;
    let byBinding = restricted.get(project.tools);
    if (!byBinding) restricted.set(project.tools, (byBinding = new Map<string, readonly RegisteredTool[]>()));
    const key = allowed.join('\n');
    let tools = byBinding.get(key);
    if (!tools) {
      tools = project.tools.filter((t) => keyMayUseTool(allowed, t.executor.definition.name));
      byBinding.set(key, tools);
    }
    return { settings: project.settings, tools };
  }

  // Whether the project has this tool and a key bound to `allowed` may use it.
  static offers(project: ProjectTools, allowed: readonly string[] | null, toolName: string): boolean {
    return keyMayUseTool(allowed, toolName) && project.tools.some((t) => t.executor.definition.name === toolName);
  }

  // The named tool of an already loaded project, or 404 tool_not_found with the closest names.
  static pick({ tools }: ProjectTools, toolName: string): RegisteredTool {
    const tool = tools.find((t) => t.executor.definition.name === toolName);
    if (!tool)
      throw toolNotFound(
        toolName,
        tools.map((t) => t.executor.definition.name),
      );
    return tool;
  }

  // The same array for as long as the project's skill tools are the same cached array: every project
  // without skills shares the built-ins array, and a skill change (SkillTools drops its array) gives a new one.
  private toolsWith(skillTools: readonly SkillTool[]): readonly RegisteredTool[] {
    if (skillTools.length === 0) return this.compiled;
    let tools = this.withSkills.get(skillTools);
    if (!tools) {
      tools = [...this.compiled, ...skillTools];
      this.withSkills.set(skillTools, tools);
    }
    return tools;
  }
}
