import { BUILTIN_TOOL_NAMES } from '../execution/builtin-tool-names.js';
import type { SkillToolSpec } from './skill-compiler.js';
import { skillSource } from './skill-tools.js';
import { type ToolCollision, toolNameCollision } from './skills.errors.js';
import type { LockedProject } from './skills.repository.js';

// Tool names stay unique in a project across the built-ins, its enabled skills and the names its toolsets
// give tools by renaming them (the model calls those by them): 409 naming each clash.
export async function checkToolCollisions(project: LockedProject, skillId: string, tools: Pick<SkillToolSpec, 'name'>[]): Promise<void> {
  const taken = new Map<string, Omit<ToolCollision, 'tool'>>(BUILTIN_TOOL_NAMES.map((name) => [name, { conflictsWith: 'builtin' }]));
  for (const other of await project.enabledSkills()) {
    if (other.id === skillId) continue;
    for (const tool of other.tools) taken.set(tool.name, { conflictsWith: skillSource(other) });
  }
  for (const claim of await project.claimedNames()) {
    if (!taken.has(claim.name)) taken.set(claim.name, { conflictsWith: claim.heldBy, renamed: claim.tool });
  }
  const collisions: ToolCollision[] = tools
    .filter((tool) => taken.has(tool.name))
    .map((tool) => ({ tool: tool.name, ...taken.get(tool.name)! }));
  if (collisions.length > 0) throw toolNameCollision(collisions);
}
