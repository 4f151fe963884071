import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsObject, IsString, Length, Matches } from 'class-validator';
import type { ToolsetEntry, ToolsetRecord } from '../toolsets.repository.js';

export const TOOLSET_MODES = ['direct', 'search'] as const;
export const TOOLSET_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const MAX_TOOLSET_ENTRIES = 200;

export class ToolsetEntryDto {
  @ApiProperty({
    example: 'read_file',
    description:
      'A tool name, a name ending in `*` (`github_*`), or a class (`@commands`, `@writes`, `@network`, `@all`) as in approvalRequired',
  })
  select!: string;
  @ApiPropertyOptional({ example: 'read_doc', description: 'A single selected tool only: the name the model sees (^[a-zA-Z0-9_-]{1,64}$)' })
  name?: string;
  @ApiPropertyOptional({ description: 'A single selected tool only: a display title (MCP `title`)' })
  title?: string;
  @ApiPropertyOptional({ description: 'A single selected tool only: the description the model sees' })
  description?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { method: 'GET' },
    description: 'A single selected tool only: arguments removed from the schema the model sees and added to every call before validation',
  })
  fixedArguments?: Record<string, unknown>;
  @ApiPropertyOptional({
    example: 'docs',
    description: "A single file tool only: a directory of the workspace its paths are confined to, the model's paths relative to it",
  })
  pathPrefix?: string;
}

export class ToolsetBodyDto {
  @ApiProperty({ example: 'docs-reader', description: '1-64 lowercase letters, digits or dashes; unique in the project' })
  @IsString()
  @Matches(TOOLSET_SLUG, { message: 'slug must be 1-64 lowercase letters, digits or dashes, not starting or ending with a dash' })
  slug!: string;

  @ApiProperty({ example: 'Docs reader' })
  @IsString()
  @Length(1, 100)
  name!: string;

  @ApiProperty({ enum: TOOLSET_MODES, description: 'direct: the model sees the tools; search: it sees search_tools and call_tool' })
  @IsIn(TOOLSET_MODES)
  mode!: (typeof TOOLSET_MODES)[number];

  @ApiProperty({ type: [ToolsetEntryDto], description: `1-${MAX_TOOLSET_ENTRIES} entries, applied in order` })
  @IsArray()
  @ArrayMaxSize(MAX_TOOLSET_ENTRIES)
  @IsObject({ each: true })
  tools!: ToolsetEntry[];
}

export class ToolsetResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) projectId!: string;
  @ApiProperty() slug!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: TOOLSET_MODES }) mode!: string;
  @ApiProperty({ type: [ToolsetEntryDto] }) tools!: ToolsetEntryDto[];
  @ApiProperty({ type: [String], description: 'The names the model can call now (in search mode, the tools search_tools finds)' })
  exposedTools!: string[];
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;

  static from(record: ToolsetRecord, exposedTools: string[]): ToolsetResponseDto {
    return {
      id: record.id,
      projectId: record.projectId,
      slug: record.slug,
      name: record.name,
      mode: record.mode,
      tools: [...record.tools],
      exposedTools,
      createdAt: record.createdAt.toISOString(),
      updatedAt: record.updatedAt.toISOString(),
    };
  }
}

export class ToolsetListResponseDto {
  @ApiProperty({ type: [ToolsetResponseDto] }) items!: ToolsetResponseDto[];
}
