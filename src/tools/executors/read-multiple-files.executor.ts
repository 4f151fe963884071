import { Inject, Injectable } from '@nestjs/common';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { AppError } from '../../common/errors/app-error.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { WorkspaceFsError } from '../../workspace/fs/workspace-fs.js';
import { WorkspaceReadThreads } from '../../workspace/read-threads/workspace-read-threads.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { FILE_TOOL_TIMEOUT_MS } from '../tools.config.js';
import { PATH_PROPERTY } from './file-tool.schemas.js';

interface ReadMultipleFilesArgs {
  paths: string[];
  limit?: number;
}

export const MAX_FILES_PER_CALL = 50;

@Injectable()
export class ReadMultipleFilesExecutor implements ToolExecutor<ReadMultipleFilesArgs> {
  readonly definition: ToolDefinition = {
    name: 'read_multiple_files',
    ...BUILTIN_OUTPUTS.read_multiple_files,
    description: `Read up to ${MAX_FILES_PER_CALL} text files of the project workspace in one call. Each file answers on its own: its content (cut like read_file, with the offset to read on) or its own error; one bad path does not fail the others.`,
    inputSchema: {
      type: 'object',
      properties: {
        paths: { type: 'array', items: PATH_PROPERTY, minItems: 1, maxItems: MAX_FILES_PER_CALL, description: 'Files to read' },
        limit: { type: 'integer', minimum: 1, maximum: 100000, description: 'Most lines to return from each file' },
      },
      required: ['paths'],
      additionalProperties: false,
    },
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    timeoutMs: FILE_TOOL_TIMEOUT_MS,
    source: 'builtin',
  };

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly reads: WorkspaceReadThreads,
  ) {}

  async execute(args: ReadMultipleFilesArgs, ctx: ToolContext) {
    // The answer holds every file: each gets an equal share of the read cap (never under 4 KiB).
    const maxBytes = Math.max(4096, Math.floor(this.config.tools.readMaxBytes / args.paths.length));
    const files = await Promise.all(
      args.paths.map(async (path) => {
        try {
          return {
            ...(await this.reads.readFile(ctx.fileRoot ?? ctx.workspace, path, { limit: args.limit, maxBytes })),
            ok: true as const,
          };
        } catch (err) {
          // Refusals (outside the workspace, a FIFO) and outcomes (missing, binary) alike stay with their file.
          if (err instanceof AppError || err instanceof WorkspaceFsError) {
            return { path, ok: false as const, error: { code: err.code, message: err.message } };
          }
          throw err;
        }
      }),
    );
    const failed = files.filter((f) => !f.ok).length;
    return { files, read: files.length - failed, failed };
  }
}
