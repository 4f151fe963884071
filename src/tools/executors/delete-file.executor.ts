import { Injectable } from '@nestjs/common';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { deleteWorkspacePath } from '../../workspace/fs/workspace-fs.js';
import { WorkspaceQuota } from '../../workspace/workspace-quota.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { LIST_TOOL_TIMEOUT_MS } from '../tools.config.js';
import { PATH_PROPERTY } from './file-tool.schemas.js';

interface DeleteFileArgs {
  path: string;
  recursive?: boolean;
}

@Injectable()
export class DeleteFileExecutor implements ToolExecutor<DeleteFileArgs> {
  readonly definition: ToolDefinition = {
    name: 'delete_file',
    ...BUILTIN_OUTPUTS.delete_file,
    description:
      'Delete a file (or, with recursive: true, a directory and everything in it) from the project workspace. A symlink is removed, never its target. The workspace root cannot be deleted.',
    inputSchema: {
      type: 'object',
      properties: {
        path: PATH_PROPERTY,
        recursive: { type: 'boolean', description: 'Required to delete a directory (default false)' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
    timeoutMs: LIST_TOOL_TIMEOUT_MS,
    source: 'builtin',
  };

  readonly settlesOnStop = true;

  constructor(private readonly quota: WorkspaceQuota) {}

  async execute(args: DeleteFileArgs, ctx: ToolContext) {
    try {
      return await deleteWorkspacePath(ctx.fileRoot ?? ctx.workspace, args.path, { recursive: args.recursive, signal: ctx.signal });
    } finally {
      // What was freed counts once the workspace is measured again, before anything is refused.
      this.quota.afterDelete(ctx.workspace);
    }
  }
}
