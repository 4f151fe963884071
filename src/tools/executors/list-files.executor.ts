import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { WORKER_POOL, type WorkerPool } from '../../common/worker-pool/worker-pool.js';
import type { WorkspaceWorkerTasks } from '../../workspace/workspace-worker-tasks.js';
import { listRecursivelyAsJson } from '../../workspace/recursive-listing.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { LIST_TOOL_TIMEOUT_MS } from '../tools.config.js';
import { GLOB_PROPERTY, PATH_PROPERTY } from './file-tool.schemas.js';

interface ListFilesArgs {
  path?: string;
  recursive?: boolean;
  maxDepth?: number;
  includeHidden?: boolean;
  limit?: number;
  glob?: string;
  details?: boolean;
}

const DEFAULT_LIMIT = 1000;

@Injectable()
export class ListFilesExecutor implements ToolExecutor<ListFilesArgs> {
  readonly definition: ToolDefinition = {
    name: 'list_files',
    ...BUILTIN_OUTPUTS.list_files,
    description:
      'List the entries of a directory in the project workspace (name, path, type; with details, also size and modified). Recursive listings are bounded by maxDepth and limit; symlinks are listed, never followed.',
    inputSchema: {
      type: 'object',
      properties: {
        path: { ...PATH_PROPERTY, description: 'Directory relative to the workspace (default: its root)' },
        recursive: { type: 'boolean', description: 'Descend into subdirectories (default false)' },
        maxDepth: { type: 'integer', minimum: 1, maximum: 64, description: 'How deep a recursive listing goes (default 32)' },
        includeHidden: { type: 'boolean', description: 'Include names starting with a dot (default false)' },
        limit: { type: 'integer', minimum: 1, maximum: 10000, description: `Most entries to return (default ${DEFAULT_LIMIT})` },
        glob: {
          ...GLOB_PROPERTY,
          description: "Only entries whose path matches, e.g. '**/*.ts' (without '/': the entry's name at any depth)",
        },
        details: {
          type: 'boolean',
          description:
            'Also give each entry its size in bytes and modification time (default: true for one directory, false for a recursive listing, where it makes a big tree several times slower)',
        },
      },
      additionalProperties: false,
    },
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    timeoutMs: LIST_TOOL_TIMEOUT_MS,
    source: 'builtin',
  };

  constructor(
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<WorkspaceWorkerTasks>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  execute(args: ListFilesArgs, ctx: ToolContext) {
    const options = {
      maxDepth: args.maxDepth,
      includeHidden: args.includeHidden,
      limit: args.limit ?? DEFAULT_LIMIT,
      glob: args.glob,
      // A recursive listing is usually for finding paths; sizes and times cost an lstat per entry.
      details: args.details ?? !args.recursive,
    };
    // A big walk would hold the event loop: past a small budget (entries, or the size of one directory) it runs
    // in the pool, which answers the listing as JSON text (common/json/json-text.ts). One directory is a
    // walk one level deep.
    const walk = args.recursive ? options : { ...options, maxDepth: 1 };
    return listRecursivelyAsJson(this.pool, ctx.fileRoot ?? ctx.workspace, args.path ?? '', walk, this.config.tools.resultMaxBytes, {
      signal: ctx.signal,
      key: ctx.tenantId,
    });
  }
}
