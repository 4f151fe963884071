import { Injectable } from '@nestjs/common';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { writeWorkspaceFile } from '../../workspace/fs/workspace-fs.js';
import { TenantStorage } from '../../workspace/tenant-storage.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { FILE_TOOL_TIMEOUT_MS } from '../tools.config.js';
import { PATH_PROPERTY } from './file-tool.schemas.js';

interface WriteFileArgs {
  path: string;
  content: string;
  encoding?: 'utf8' | 'base64';
  createDirs?: boolean;
}

@Injectable()
export class WriteFileExecutor implements ToolExecutor<WriteFileArgs> {
  readonly definition: ToolDefinition = {
    name: 'write_file',
    ...BUILTIN_OUTPUTS.write_file,
    description:
      'Create or replace a file in the project workspace. The write is atomic: readers see the old content or the new, never a mix.',
    inputSchema: {
      type: 'object',
      properties: {
        path: PATH_PROPERTY,
        content: { type: 'string', description: 'The whole new content' },
        encoding: { type: 'string', enum: ['utf8', 'base64'], description: 'How content is encoded (default utf8)' },
        createDirs: { type: 'boolean', description: 'Create missing parent directories (default false)' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
    timeoutMs: FILE_TOOL_TIMEOUT_MS,
    source: 'builtin',
  };

  readonly settlesOnStop = true;

  constructor(private readonly storage: TenantStorage) {}

  execute(args: WriteFileArgs, ctx: ToolContext) {
    const content = Buffer.from(args.content, args.encoding === 'base64' ? 'base64' : 'utf8');
    return writeWorkspaceFile(ctx.fileRoot ?? ctx.workspace, args.path, content, {
      createDirs: args.createDirs,
      reserveGrowth: (growth, display) => this.storage.reserve(ctx.tenantId, ctx.workspace, growth, display, ctx.signal),
      signal: ctx.signal,
    });
  }
}
