import { Inject, Injectable } from '@nestjs/common';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { WORKER_POOL, type WorkerPool } from '../../common/worker-pool/worker-pool.js';
import type { WorkspaceWorkerTasks } from '../../workspace/workspace-worker-tasks.js';
import type { SearchWorkspacePayload } from '../../workspace/workspace-worker-tasks.js';
import { compileGlob } from '../../workspace/fs/workspace-glob.js';
import { compileSearchPattern, type SearchWorkspaceResult } from '../../workspace/fs/workspace-search.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { SEARCH_MAX_FILE_BYTES, SEARCH_TIME_BUDGET_MS, SEARCH_TOOL_TIMEOUT_MS } from '../tools.config.js';
import { GLOB_PROPERTY, PATH_PROPERTY } from './file-tool.schemas.js';

interface SearchFilesArgs {
  pattern: string;
  path?: string;
  glob?: string;
  caseSensitive?: boolean;
  maxResults?: number;
  contextLines?: number;
}

const DEFAULT_MAX_RESULTS = 100;

@Injectable()
export class SearchFilesExecutor implements ToolExecutor<SearchFilesArgs> {
  readonly definition: ToolDefinition = {
    name: 'search_files',
    ...BUILTIN_OUTPUTS.search_files,
    description: `Search the text files of the project workspace for lines matching a regular expression (RE2 syntax: no backreferences or lookaround). Answers each matching line with its path and line number, optionally with context lines. Skips binary files, .git, symlinks and files over ${SEARCH_MAX_FILE_BYTES / 1024 / 1024} MiB. Stops after ${SEARCH_TIME_BUDGET_MS / 1000} s with what it found (truncated, stoppedBy: budget) when the pattern is costly to match.`,
    inputSchema: {
      type: 'object',
      properties: {
        pattern: {
          type: 'string',
          minLength: 1,
          maxLength: 4096,
          description: "Regular expression matched against each line, e.g. 'function \\\\w+Handler' or a plain word",
        },
        path: { ...PATH_PROPERTY, description: 'Directory (or file) to search, relative to the workspace (default: its root)' },
        glob: {
          ...GLOB_PROPERTY,
          description: "Only files whose path matches, e.g. '**/*.ts' or '*.{js,ts}' (without '/': the file name at any depth)",
        },
        caseSensitive: { type: 'boolean', description: 'Default true' },
        maxResults: {
          type: 'integer',
          minimum: 1,
          maximum: 1000,
          description: `Most matching lines to return (default ${DEFAULT_MAX_RESULTS})`,
        },
        contextLines: { type: 'integer', minimum: 0, maximum: 10, description: 'Lines before and after each match to include (default 0)' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    timeoutMs: SEARCH_TOOL_TIMEOUT_MS,
    source: 'builtin',
  };

  constructor(@Inject(WORKER_POOL) private readonly pool: WorkerPool<WorkspaceWorkerTasks>) {}

  async execute(args: SearchFilesArgs, ctx: ToolContext): Promise<SearchWorkspaceResult> {
    // A bad pattern or glob is refused here, before a thread is woken for it.
    compileSearchPattern(args.pattern, args.caseSensitive);
    if (args.glob) compileGlob(args.glob);
    const payload: SearchWorkspacePayload = {
      root: ctx.fileRoot ?? ctx.workspace,
      path: args.path ?? '',
      options: {
        pattern: args.pattern,
        glob: args.glob,
        caseSensitive: args.caseSensitive ?? true,
        maxResults: args.maxResults ?? DEFAULT_MAX_RESULTS,
        contextLines: args.contextLines ?? 0,
        maxFileBytes: SEARCH_MAX_FILE_BYTES,
        budgetMs: Math.min(SEARCH_TIME_BUDGET_MS, Math.floor(ctx.timeoutMs / 2)),
      },
    };
    // A tree of thousands of files would hold the event loop: the walk and the reads run in the pool, and
    // the call's deadline or cancellation stops the thread.
    return this.pool.run('searchWorkspace', payload, { signal: ctx.signal, key: ctx.tenantId });
  }
}
