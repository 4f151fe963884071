import { Inject, Injectable } from '@nestjs/common';
import {
  type CompleteResult,
  ErrorCode,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  McpError,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../common/errors/app-error.js';
import { WORKER_POOL, type WorkerPool } from '../common/worker-pool/worker-pool.js';
import { CallDispatcher } from '../tools/call-dispatcher.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import type { CallPrincipal } from '../tools/tool-call.gate.js';
import type { ToolCatalogue } from '../tools/tool-catalogue.js';
import { WorkspaceFsError } from '../workspace/fs/workspace-fs.js';
import { listRecursively } from '../workspace/recursive-listing.js';
import { WorkspaceResolver } from '../workspace/workspace-resolver.js';
import type { WorkspaceWorkerTasks } from '../workspace/workspace-worker-tasks.js';
import { callWouldPark } from '../tools/call-parking.js';

// The one template: a workspace file by its path, relative to the workspace root.
export const FILE_TEMPLATE = 'file:///{path}';
const READ_TOOL = 'read_file';
// Resources in one resources/list page.
export const RESOURCE_PAGE_SIZE = 200;
// Entries one listing walks (list_files' own most); a larger workspace is listed up to there.
export const RESOURCE_WALK_LIMIT = 10_000;
// Paths one completion offers (MCP's most), and entries it walks to find them.
export const COMPLETION_VALUES = 100;
const COMPLETION_WALK_LIMIT = 2_000;
// MCP's code for a resource that does not exist.
export const RESOURCE_NOT_FOUND = -32002;

export interface ResourceCaller {
  tenantId: string;
  projectId: string;
  principal: CallPrincipal;
  controller: AbortController;
  catalogue?: ToolCatalogue;
}

// The project's workspace files as MCP resources, `file:///{path}`. Offered where the key may call
// read_file and the endpoint is the project's own (a toolset shows chosen tools, not the workspace). A read
// is a read_file call (encoding base64) through the same gate as tools/call: the key's binding, the rate
// limits, the workspace confinement and size cap, and one audit row with channel mcp. Listing and
// completion walk the workspace as list_files does (hidden names skipped, symlinks never followed) and,
// like tools/list, are not audited.
@Injectable()
export class McpWorkspaceResources {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly workspaces: WorkspaceResolver,
    private readonly dispatcher: CallDispatcher,
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<WorkspaceWorkerTasks>,
  ) {}

  async offered(caller: ResourceCaller): Promise<boolean> {
    if (caller.catalogue) return false;
    const { tools } = ToolRegistry.restrict(await this.registry.forProject(caller.tenantId, caller.projectId), caller.principal.tools);
    return tools.some((tool) => tool.executor.definition.name === READ_TOOL);
  }

  // Regular files in walk order (depth first, names sorted by code unit), a page at a time; the cursor is
  // the last path given, so a page after files came or went starts where the last one ended.
  async list(caller: ResourceCaller, cursor: string | undefined): Promise<ListResourcesResult> {
    await this.mayRead(caller);
    if (!(await this.mayBrowse(caller))) return { resources: [] };
    const after = cursor === undefined ? null : pathOfCursor(cursor);
    const { files } = await asMcpError(() => this.files(caller, '', RESOURCE_WALK_LIMIT));
    const start = after === null ? 0 : files.findIndex((path) => comparePaths(path, after) > 0);
    const page = start === -1 ? [] : files.slice(start, start + RESOURCE_PAGE_SIZE);
    const more = start !== -1 && start + RESOURCE_PAGE_SIZE < files.length;
    return {
      resources: page.map(toResource),
      ...(more ? { nextCursor: Buffer.from(page.at(-1)!, 'utf8').toString('base64url') } : {}),
    };
  }

  async templates(caller: ResourceCaller): Promise<ListResourceTemplatesResult> {
    await this.mayRead(caller);
    return {
      resourceTemplates: [
        {
          uriTemplate: FILE_TEMPLATE,
          name: 'workspace-file',
          title: 'Workspace file',
          description:
            'A file of the project workspace by its path relative to the workspace root, e.g. file:///src/index.ts (read as read_file reads it)',
        },
      ],
    };
  }

  async read(caller: ResourceCaller, uri: string): Promise<ReadResourceResult> {
    const path = pathOfUri(uri);
    let outcome;
    try {
      outcome = await this.dispatcher.dispatch(
        {
          tenantId: caller.tenantId,
          projectId: caller.projectId,
          principal: caller.principal,
          toolName: READ_TOOL,
          body: { arguments: { path, encoding: 'base64' } },
          channel: 'mcp',
        },
        caller.controller,
      );
    } catch (error) {
      if (error instanceof AppError && error.code === 'tool_not_found') throw mayNotRead();
      if (error instanceof AppError) throw new McpError(ErrorCode.InvalidParams, error.message, { code: error.code });
      throw error;
    }
    if (outcome.status === 'pending_approval') {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `This read of ${uri} awaits approval by a person and has not run (invocation ${outcome.invocationId}); its outcome will be at GET /v1/projects/{projectId}/invocations/${outcome.invocationId}`,
        { invocationId: outcome.invocationId },
      );
    }
    if (outcome.status !== 'ok') {
      const error = outcome.error ?? { code: 'internal_error', message: 'The read failed' };
      const code = error.code === 'not_found' ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams;
      throw new McpError(code, error.message, { uri, code: error.code, invocationId: outcome.invocationId });
    }
    const file = outcome.result as { content: string; truncated: boolean; size: number };
    if (file.truncated) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `${uri} is ${file.size} bytes, more than one read returns; read it in parts with the read_file tool (offset)`,
        { uri, code: 'file_too_large', invocationId: outcome.invocationId },
      );
    }
    const bytes = Buffer.from(file.content, 'base64');
    const text = asText(bytes);
    const mimeType = mimeTypeOf(path) ?? (text === null ? 'application/octet-stream' : 'text/plain');
    return { contents: [text === null ? { uri, mimeType, blob: file.content } : { uri, mimeType, text }] };
  }

  // Paths of workspace files that start with what was typed, walked from the directory it names; what
  // cannot be walked (outside the workspace, not a directory) completes to nothing.
  async complete(
    caller: ResourceCaller,
    ref: { type: string; uri?: string },
    argument: { name: string; value: string },
  ): Promise<CompleteResult> {
    await this.mayRead(caller);
    if (ref.type !== 'ref/resource' || ref.uri !== FILE_TEMPLATE) {
      throw new McpError(ErrorCode.InvalidParams, `Only the resource template ${FILE_TEMPLATE} has arguments to complete`);
    }
    const none = { completion: { values: [], total: 0, hasMore: false } };
    if (argument.name !== 'path' || !(await this.mayBrowse(caller))) return none;
    const typed = argument.value;
    const directory = typed.includes('/') ? typed.slice(0, typed.lastIndexOf('/')) : '';
    let walked: WalkedFiles;
    try {
      walked = await this.files(caller, directory, COMPLETION_WALK_LIMIT);
    } catch (error) {
      if (error instanceof WorkspaceFsError || error instanceof AppError) return none;
      throw error;
    }
    const matching = walked.files.filter((path) => path.startsWith(typed));
    return {
      completion: {
        values: matching.slice(0, COMPLETION_VALUES),
        total: matching.length,
        hasMore: matching.length > COMPLETION_VALUES || walked.truncated,
      },
    };
  }

  private async mayRead(caller: ResourceCaller): Promise<void> {
    if (!(await this.offered(caller))) throw mayNotRead();
  }

  // Listing and completion name the workspace's files with no call made, so they are only for a key whose
  // read_file runs without a person's approval: a key whose every call parks, or a project that wants
  // read_file approved, gets no names (its reads of a named file still go through, and park).
  private async mayBrowse(caller: ResourceCaller): Promise<boolean> {
    const project = await this.registry.forProject(caller.tenantId, caller.projectId);
    const read = project.tools.find((tool) => tool.executor.definition.name === READ_TOOL);
    return read !== undefined && !callWouldPark(caller.principal, project.settings.approvalRequired, read.executor);
  }

  // Workspace-relative paths of the regular files below `directory`, as list_files walks them.
  private async files(caller: ResourceCaller, directory: string, limit: number): Promise<WalkedFiles> {
    const { path: root } = await this.workspaces.resolve(caller.tenantId, caller.projectId);
    const listing = await listRecursively(
      this.pool,
      root,
      directory,
      { limit },
      { signal: caller.controller.signal, key: caller.tenantId },
    );
    return { files: listing.entries.filter((entry) => entry.type === 'file').map((entry) => entry.path), truncated: listing.truncated };
  }
}

interface WalkedFiles {
  files: string[];
  truncated: boolean;
}

const mayNotRead = () =>
  new McpError(
    ErrorCode.InvalidParams,
    `This key may not call ${READ_TOOL}, so it may not list or read the workspace's files as resources`,
  );

async function asMcpError<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof WorkspaceFsError || error instanceof AppError) throw new McpError(ErrorCode.InvalidParams, error.message);
    throw error;
  }
}

// file:///{path}: no host (file://host/… names another machine), no query or fragment, the path
// percent-decoded and relative to the workspace root. What the path may name is read_file's to judge.
export function pathOfUri(uri: string): string {
  const invalid = (why: string) =>
    new McpError(
      ErrorCode.InvalidParams,
      `${printable(uri)} is not a workspace file: ${why}; write file:///{path}, the path relative to the workspace root`,
    );
  if (!uri.startsWith('file://')) throw invalid('the scheme must be file');
  if (!uri.startsWith('file:///')) throw invalid('a file URI with a host names another machine');
  const encoded = uri.slice('file:///'.length);
  if (/[?#]/.test(encoded)) throw invalid('it has a query or a fragment');
  let path: string;
  try {
    path = decodeURIComponent(encoded);
  } catch {
    throw invalid('its percent-encoding is not UTF-8');
  }
  if (path === '') throw invalid('it names no file');
  if (path.startsWith('/')) throw invalid('the path must be relative to the workspace root');
  return path;
}

export const uriOfPath = (path: string): string => `file:///${path.split('/').map(encodeURIComponent).join('/')}`;

function toResource(path: string): Resource {
  const mimeType = mimeTypeOf(path);
  return { uri: uriOfPath(path), name: path, ...(mimeType ? { mimeType } : {}) };
}

function pathOfCursor(cursor: string): string {
  const path = Buffer.from(cursor, 'base64url').toString('utf8');
  if (path === '' || Buffer.from(path, 'utf8').toString('base64url') !== cursor)
    throw new McpError(ErrorCode.InvalidParams, 'The cursor is not one this server gave');
  return path;
}

// The walk's order: segment by segment, each compared by code unit.
function comparePaths(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return x.length - y.length;
}

// The bytes as text when they are UTF-8 without NUL (read_file's own test), else null.
function asText(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

const MIME_TYPES: Record<string, string> = {
  txt: 'text/plain',
  md: 'text/markdown',
  html: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  js: 'text/javascript',
  mjs: 'text/javascript',
  json: 'application/json',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
};

// By the name's extension; a name without a known one has none (a read then says text/plain or octet-stream).
function mimeTypeOf(path: string): string | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? MIME_TYPES[name.slice(dot + 1).toLowerCase()] : undefined;
}

const printable = (value: string): string => `'${value.replace(/[^\x20-\x7e]/g, '?').slice(0, 128)}'`;
