import { Inject, Injectable } from '@nestjs/common';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { WorkspaceReadThreads } from '../../workspace/read-threads/workspace-read-threads.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { FILE_TOOL_TIMEOUT_MS } from '../tools.config.js';
import { PATH_PROPERTY } from './file-tool.schemas.js';

interface ReadFileArgs {
  path: string;
  offset?: number;
  limit?: number;
  encoding?: 'utf8' | 'base64';
}

@Injectable()
export class ReadFileExecutor implements ToolExecutor<ReadFileArgs> {
  readonly definition: ToolDefinition = {
    name: 'read_file',
    ...BUILTIN_OUTPUTS.read_file,
    description:
      'Read a text file from the project workspace, by lines. Long files are cut at a byte cap; the answer says so and gives the offset to read on from. Binary files are refused unless encoding is "base64".',
    inputSchema: {
      type: 'object',
      properties: {
        path: PATH_PROPERTY,
        offset: { type: 'integer', minimum: 1, description: 'First line to read, 1-based (default 1); a byte offset with base64' },
        limit: { type: 'integer', minimum: 1, maximum: 100000, description: 'Most lines to return' },
        encoding: { type: 'string', enum: ['utf8', 'base64'], description: 'base64 returns raw bytes, for binary files' },
      },
      required: ['path'],
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

  execute(args: ReadFileArgs, ctx: ToolContext) {
    return this.reads.readFile(ctx.fileRoot ?? ctx.workspace, args.path, {
      offset: args.offset,
      limit: args.limit,
      encoding: args.encoding,
      maxBytes: this.config.tools.readMaxBytes,
    });
  }
}
