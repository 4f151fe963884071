import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { CedarValueJson, EntityJson, EntityUidJson } from '@cedar-policy/cedar-wasm/nodejs';
import { FILE_TOOL_PATH_PARAMETERS } from '../tools/builtin-file-paths.js';
import { classesOf } from '../tools/tool-classes.js';
import type { ToolExecutor } from '../execution/tool-definition.js';
import type { PolicyRequest } from './policy-set.js';

// Who asks, as the policies see it: the key, its role, and the OAuth client an access token was issued to.
export interface PolicyPrincipal {
  keyId: string;
  keyName: string;
  role: string;
  oauthClient: string | null;
}

// One call as the policies judge it: the arguments as they will run (a toolset's fixed ones included).
export interface PolicyCall {
  projectId: string;
  principal: PolicyPrincipal;
  executor: ToolExecutor;
  exposed: { toolset: string; name: string } | null;
  args: Record<string, unknown>;
  channel: string;
  // The workspace's real path, and the directory a toolset confines the call's paths to (null: none).
  workspace: string;
  pathPrefix: string | null;
  now: Date;
}

const entity = (type: string, id: string): EntityUidJson & { type: string; id: string } => ({ type: `Toolgate::${type}`, id });

export async function policyRequest(call: PolicyCall): Promise<PolicyRequest> {
  const { principal, executor, exposed } = call;
  const name = executor.definition.name;
  const key: EntityJson = {
    uid: entity('Key', principal.keyId || 'unknown'),
    attrs: { name: principal.keyName, role: principal.role, ...(principal.oauthClient !== null && { oauthClient: principal.oauthClient }) },
    parents: [entity('Role', principal.role)],
  };
  const project = entity('Project', call.projectId);
  const tool: EntityJson = {
    uid: entity('Tool', name),
    attrs: {
      name,
      classes: [...classesOf(executor)],
      source: sourceOf(executor),
      exposedName: exposed?.name ?? name,
      ...(exposed && { toolset: exposed.toolset }),
    },
    parents: exposed ? [project, entity('Toolset', exposed.toolset)] : [project],
  };
  const args = entity('Arguments', 'call');
  const entities: EntityJson[] = [key, tool, { uid: args, attrs: {}, parents: [], tags: argumentTags(call.args) }, { uid: project, attrs: {}, parents: [] }];
  if (exposed) entities.push({ uid: entity('Toolset', exposed.toolset), attrs: {}, parents: [project] });
  const context: Record<string, CedarValueJson> = {
    arguments: { __entity: args },
    channel: call.channel,
    time: { __extn: { fn: 'datetime', arg: call.now.toISOString() } },
    ...(await pathsOf(call)),
    ...commandOf(name, call.args),
  };
  const host = name === 'fetch_url' ? hostOf(call.args.url) : null;
  if (host !== null) context.host = host;
  return { principal: key.uid, resource: tool.uid, context, entities };
}

function sourceOf(executor: ToolExecutor): string {
  const source = executor.definition.source;
  if (source === 'builtin' || source === 'toolset') return source;
  return executor.mcpUpstream ? 'mcp' : 'skill';
}

function argumentTags(args: Record<string, unknown>): Record<string, CedarValueJson> {
  const tags: Record<string, CedarValueJson> = {};
  for (const [name, value] of Object.entries(args)) {
    if (value !== undefined) tags[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return tags;
}

// shell_exec's argv: the set, the line and the program (a path's last segment: /usr/bin/git is git).
function commandOf(tool: string, args: Record<string, unknown>): Record<string, CedarValueJson> {
  const argv = tool === 'shell_exec' && Array.isArray(args.argv) ? (args.argv as unknown[]).filter((a): a is string => typeof a === 'string') : [];
  if (argv.length === 0) return { argv: [] };
  return { argv, command: [path.posix.basename(argv[0]), ...argv.slice(1)].join(' '), program: path.posix.basename(argv[0]) };
}

// The host as the fetch will resolve it: WHATWG URL parsing lower-cases it and turns an IDN into
// punycode; a trailing dot names the same host, so it goes. Userinfo is not the host.
export function hostOf(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).hostname.replace(/\.+$/, '').replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
}

async function pathsOf(call: PolicyCall): Promise<Record<string, CedarValueJson>> {
  const parameters = call.executor.definition.source === 'builtin' ? FILE_TOOL_PATH_PARAMETERS[call.executor.definition.name] : undefined;
  if (!parameters) return { paths: [] };
  const root = call.pathPrefix === null ? '' : call.pathPrefix;
  const named: Record<string, string[]> = {};
  for (const parameter of parameters) {
    const value = call.args[parameter];
    const values = value === undefined ? ['.'] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];
    named[parameter] = await Promise.all(values.map((v) => normalisedPath(call.workspace, root, v)));
  }
  const context: Record<string, CedarValueJson> = { paths: [...new Set(Object.values(named).flat())] };
  const written = named.destination?.[0] ?? named.path?.[0];
  if (written !== undefined) context.path = written;
  if (named.source?.[0] !== undefined) context.source = named.source[0];
  return context;
}

// A path as the workspace will resolve it, relative to its root: a toolset's prefix joined, an absolute
// path taken as it is, `.` and `..` folded, and the symlinks of the part that exists followed. A path that
// ends up outside the workspace starts with "../" (the run refuses it too; no policy allows it by mistake).
export async function normalisedPath(workspace: string, prefix: string, value: string): Promise<string> {
  const absolute = value.startsWith('/') ? path.posix.normalize(value) : path.posix.join(workspace, prefix, value);
  const real = await followSymlinks(absolute);
  const relative = path.posix.relative(workspace, real);
  return relative === '' ? '.' : relative;
}

// The real path of the longest part of `absolute` that exists, with the rest appended.
async function followSymlinks(absolute: string): Promise<string> {
  const rest: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      return rest.length === 0 ? real : path.posix.join(real, ...rest.reverse());
    } catch {
      const parent = path.posix.dirname(current);
      if (parent === current) return absolute;
      rest.push(path.posix.basename(current));
      current = parent;
    }
  }
}
