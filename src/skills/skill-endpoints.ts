import { checkEndpoint } from '../execution/net/endpoint-check.js';
import type { SkillBody } from './skill-compiler.js';
import type { McpSource } from './mcp/mcp-skill-importer.js';

// Every address a skill would call (its http and mcp executors, the MCP server it imports from), judged at
// registration by the rules each call is judged by (FETCH_ALLOW_HOSTS opens hosts for both): a skill at
// 127.0.0.1 or the metadata service is refused now, with the url_blocked its calls would get, instead of
// being stored and failing on every call. Before anything is contacted.
export async function checkSkillEndpoints(skill: SkillBody & { source?: McpSource }, allowHosts: readonly string[]): Promise<void> {
  const urls = new Set<string>();
  if (skill.source) urls.add(skill.source.url);
  for (const tool of skill.tools ?? []) if (tool.executor.type !== 'command') urls.add(tool.executor.url);
  for (const url of urls) await checkEndpoint(url, { allowHosts });
}
