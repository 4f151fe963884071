import { Injectable } from '@nestjs/common';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { editWorkspaceFile } from '../../workspace/fs/workspace-file.editor.js';
import { TenantStorage } from '../../workspace/tenant-storage.js';
import { applyTextEdits, type TextEdit } from '../edit/text-edits.js';
import { unifiedDiff } from '../edit/unified-diff.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { EDIT_MAX_FILE_BYTES, FILE_TOOL_TIMEOUT_MS } from '../tools.config.js';
import { PATH_PROPERTY } from './file-tool.schemas.js';

interface EditFileArgs {
  path: string;
  edits: TextEdit[];
  dryRun?: boolean;
}

@Injectable()
export class EditFileExecutor implements ToolExecutor<EditFileArgs> {
  readonly definition: ToolDefinition = {
    name: 'edit_file',
    ...BUILTIN_OUTPUTS.edit_file,
    description:
      'Edit a text file in the project workspace by exact replacement: each oldText must occur exactly once in the file (as the previous edits left it) and is replaced by its newText. All edits apply or none do, atomically; the answer is a unified diff. dryRun shows the diff without writing. Line endings are kept.',
    inputSchema: {
      type: 'object',
      properties: {
        path: PATH_PROPERTY,
        edits: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: {
            type: 'object',
            properties: {
              oldText: {
                type: 'string',
                minLength: 1,
                description: 'Text to replace, copied exactly (whitespace included); must occur once',
              },
              newText: { type: 'string', description: 'Text to put in its place' },
            },
            required: ['oldText', 'newText'],
            additionalProperties: false,
          },
          description: 'Replacements, applied in order',
        },
        dryRun: { type: 'boolean', description: 'Return the diff without writing (default false)' },
      },
      required: ['path', 'edits'],
      additionalProperties: false,
    },
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
    timeoutMs: FILE_TOOL_TIMEOUT_MS,
    source: 'builtin',
  };

  readonly settlesOnStop = true;

  constructor(private readonly storage: TenantStorage) {}

  async execute(args: EditFileArgs, ctx: ToolContext) {
    const dryRun = args.dryRun ?? false;
    const reserveGrowth = (growth: number, display: string) =>
      this.storage.reserve(ctx.tenantId, ctx.workspace, growth, display, ctx.signal);
    const result = await editWorkspaceFile(
      ctx.fileRoot ?? ctx.workspace,
      args.path,
      { maxBytes: EDIT_MAX_FILE_BYTES, dryRun, reserveGrowth, signal: ctx.signal },
      (text, display) => {
        const edited = applyTextEdits(text, args.edits, display);
        return { text: edited.text === text ? null : edited.text, value: edited };
      },
    );
    return {
      path: result.path,
      edits: args.edits.length,
      dryRun,
      written: result.written,
      diff: unifiedDiff(result.path, result.value.before, result.value.after),
    };
  }
}
