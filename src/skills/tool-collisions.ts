import { BUILTIN_TOOL_NAMES } from '../tools/builtin-tool-names.js';
import type { SkillToolSpec } from './skill-compiler.js';
import { skillSource } from './skill-tools.js';
import { type ToolCollision, toolNameCollision } from './skills.errors.js';
import type { LockedProject } from './skills.repository.js';

// Tool names stay unique in a project across the built-ins and its enabled skills: 409 naming each clash.
export async function checkToolCollisions(project: LockedProject, skillId: string, tools: Pick<SkillToolSpec, 'name'>[]): Promise<void> {
  const taken = new Map<string, string>(BUILTIN_TOOL_NAMES.map((name) => [name, 'builtin']));
  for (const other of await project.enabledSkills()) {
    if (other.id === skillId) continue;
    for (const tool of other.tools) taken.set(tool.name, skillSource(other));
  }
  const collisions: ToolCollision[] = tools.filter((tool) => taken.has(tool.name)).map((tool) => ({ tool: tool.name, conflictsWith: taken.get(tool.name)! }));
  if (collisions.length > 0) throw toolNameCollision(collisions);
}
