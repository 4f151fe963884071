import { Injectable } from '@nestjs/common';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { moveWorkspaceEntry } from '../../workspace/fs/workspace-entry.mover.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { FILE_TOOL_TIMEOUT_MS } from '../tools.config.js';
import { PATH_PROPERTY } from './file-tool.schemas.js';

interface MoveFileArgs {
  source: string;
  destination: string;
  overwrite?: boolean;
  createDirs?: boolean;
}

@Injectable()
export class MoveFileExecutor implements ToolExecutor<MoveFileArgs> {
  readonly definition: ToolDefinition = {
    name: 'move_file',
    ...BUILTIN_OUTPUTS.move_file,
    description:
      'Move or rename a file or directory inside the project workspace (one atomic rename). An existing destination is only replaced with overwrite: true; a directory cannot be moved into itself. A symlink is moved as a link.',
    inputSchema: {
      type: 'object',
      properties: {
        source: { ...PATH_PROPERTY, description: 'Entry to move, relative to the workspace' },
        destination: { ...PATH_PROPERTY, description: 'Its new path, including the name, relative to the workspace' },
        overwrite: { type: 'boolean', description: 'Replace an existing destination (default false)' },
        createDirs: { type: 'boolean', description: "Create the destination's missing parent directories (default false)" },
      },
      required: ['source', 'destination'],
      additionalProperties: false,
    },
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
    timeoutMs: FILE_TOOL_TIMEOUT_MS,
    source: 'builtin',
  };

  readonly settlesOnStop = true;

  execute(args: MoveFileArgs, ctx: ToolContext) {
    return moveWorkspaceEntry(ctx.fileRoot ?? ctx.workspace, args.source, args.destination, {
      overwrite: args.overwrite,
      createDirs: args.createDirs,
      signal: ctx.signal,
    });
  }
}
