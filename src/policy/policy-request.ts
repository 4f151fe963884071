import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { CedarValueJson, EntityJson, EntityUidJson } from '@cedar-policy/cedar-wasm/nodejs';
import { FILE_TOOL_PATH_PARAMETERS } from '../tools/builtin-file-paths.js';
import { classesOf } from '../tools/tool-classes.js';
import type { ToolExecutor } from '../execution/tool-definition.js';
import { type PolicyReads, READS_ALL, readsAttribute, readsContext } from './policy-reads.js';
import type { PolicyRequest, RequestScope } from './policy-set.js';

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

// The call's principal and resource with their ancestors, exactly as policyRequest builds them, without
// the context: enough to tell which policies' scopes can match the call.
export function scopeOfCall(call: PolicyCall): RequestScope {
  const principal = entity('Key', call.principal.keyId || 'unknown');
  const resource = entity('Tool', call.executor.definition.name);
  const project = entity('Project', call.projectId);
  return {
    principal,
    principalIn: [principal, entity('Role', call.principal.role)],
    resource,
    resourceIn: call.exposed ? [resource, project, entity('Toolset', call.exposed.toolset)] : [resource, project],
  };
}

// The request Cedar judges the call by. `reads` (what the policies to be evaluated can read) leaves out the
// values none of them names, and the work of finding them (a path's symlinks); without it, the whole request.
// An entity with nothing read of it is left out (Cedar judges `==` and `is` by the uid alone), and so is the
// empty Project entity always: a parent needs no entity of its own for `in`, and it has no attributes.
export function policyRequest(call: PolicyCall, reads: PolicyReads = READS_ALL): PolicyRequest {
  const { principal, executor, exposed } = call;
  const name = executor.definition.name;
  const attrs = (of: 'principal' | 'resource', values: Record<string, CedarValueJson | undefined>) =>
    only(values, (n) => readsAttribute(reads, of, n));
  const key: EntityJson = {
    uid: entity('Key', principal.keyId || 'unknown'),
    attrs: attrs('principal', { name: principal.keyName, role: principal.role, oauthClient: principal.oauthClient ?? undefined }),
    parents: [entity('Role', principal.role)],
  };
  const project = entity('Project', call.projectId);
  const tool: EntityJson = {
    uid: entity('Tool', name),
    attrs: attrs('resource', {
      name,
      classes: readsAttribute(reads, 'resource', 'classes') ? [...classesOf(executor)] : undefined,
      source: sourceOf(executor),
      exposedName: exposed?.name ?? name,
      toolset: exposed?.toolset,
    }),
    parents: exposed ? [project, entity('Toolset', exposed.toolset)] : [project],
  };
  const args = entity('Arguments', 'call');
  const entities: EntityJson[] = [];
  // An attribute read but absent (oauthClient) still keeps its entity: Cedar's error is then the same one.
  const readOf = (of: 'principal' | 'resource', names: string[]) => names.some((n) => readsAttribute(reads, of, n));
  if (reads.hierarchy.principal || readOf('principal', ['name', 'role', 'oauthClient'])) entities.push(key);
  if (reads.hierarchy.resource || readOf('resource', ['name', 'classes', 'source', 'exposedName', 'toolset'])) entities.push(tool);
  if (reads.tags) entities.push({ uid: args, attrs: {}, parents: [], tags: argumentTags(call.args) });
  if (exposed && reads.hierarchy.resource) entities.push({ uid: entity('Toolset', exposed.toolset), attrs: {}, parents: [project] });
  const wanted = (...names: string[]) => names.some((n) => readsContext(reads, n));
  const context = only(
    {
      arguments: { __entity: args },
      channel: call.channel,
      time: wanted('time') ? { __extn: { fn: 'datetime', arg: call.now.toISOString() } } : undefined,
      ...(wanted('paths', 'path', 'source') && pathsOf(call)),
      ...(wanted('argv', 'command', 'program') && commandOf(name, call.args)),
      host: wanted('host') && name === 'fetch_url' ? (hostOf(call.args.url) ?? undefined) : undefined,
    },
    (n) => readsContext(reads, n),
  );
  return { principal: key.uid, resource: tool.uid, context, entities };
}

// The defined values whose names are wanted.
function only(values: Record<string, CedarValueJson | undefined>, wanted: (name: string) => boolean): Record<string, CedarValueJson> {
  const kept: Record<string, CedarValueJson> = {};
  for (const [name, value] of Object.entries(values)) if (value !== undefined && wanted(name)) kept[name] = value;
  return kept;
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
  const argv =
    tool === 'shell_exec' && Array.isArray(args.argv) ? (args.argv as unknown[]).filter((a): a is string => typeof a === 'string') : [];
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

function pathsOf(call: PolicyCall): Record<string, CedarValueJson> {
  const parameters = call.executor.definition.source === 'builtin' ? FILE_TOOL_PATH_PARAMETERS[call.executor.definition.name] : undefined;
  if (!parameters) return { paths: [] };
  const root = call.pathPrefix === null ? '' : call.pathPrefix;
  const named: Record<string, string[]> = {};
  for (const parameter of parameters) {
    const value = call.args[parameter];
    const values =
      value === undefined
        ? ['.']
        : Array.isArray(value)
          ? value.filter((v): v is string => typeof v === 'string')
          : typeof value === 'string'
            ? [value]
            : [];
    named[parameter] = values.map((v) => normalisedPath(call.workspace, root, v));
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
export function normalisedPath(workspace: string, prefix: string, value: string): string {
  const absolute = value.startsWith('/') ? path.posix.normalize(value) : path.posix.join(workspace, prefix, value);
  const real = followSymlinks(absolute);
  const relative = path.posix.relative(workspace, real);
  return relative === '' ? '.' : relative;
}

// The real path of the longest part of `absolute` that exists, with the rest appended. One realpath(3) call
// each, made in place: the thread pool's round trip cost several times the call itself (about 40 µs against 5).
function followSymlinks(absolute: string): string {
  const rest: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = realpathSync.native(current);
      return rest.length === 0 ? real : path.posix.join(real, ...rest.reverse());
    } catch {
      const parent = path.posix.dirname(current);
      if (parent === current) return absolute;
      rest.push(path.posix.basename(current));
      current = parent;
    }
  }
}
