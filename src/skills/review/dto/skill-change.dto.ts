import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { JSON_VALUE_SCHEMA } from '../../../common/http/json-value.schema.js';
import type { SkillChangeRecord } from '../../definitions/skill-changes.repository.js';

const STATUSES = ['pending', 'accepted', 'rejected', 'superseded', 'all'] as const;

export class SkillChangeQueryDto {
  @ApiPropertyOptional({ enum: STATUSES, default: 'pending', description: 'Which changes to list (newest first, at most 200)' })
  @IsOptional()
  @IsIn(STATUSES)
  status?: (typeof STATUSES)[number];
}

export class DescriptionFlagDto {
  @ApiProperty({
    enum: ['too_long', 'instruction_override', 'directive_to_model', 'hidden_tag', 'invisible_unicode', 'concealment', 'sensitive_files'],
    description: 'The rule of the description rule set (docs/tools-and-skills.md, Pinned definitions) the text matched',
  })
  rule!: string;
  @ApiProperty({ description: '`description`, `title`, or a JSON pointer into the input schema' })
  field!: string;
  @ApiProperty({ description: 'The matched text with some context; invisible characters written as \\u{…}' })
  excerpt!: string;
}

export class DefinitionDiffEntryDto {
  @ApiProperty({ description: 'JSON pointer into the definition ({name, title?, description?, inputSchema, outputSchema?, annotations?})' })
  path!: string;
  @ApiPropertyOptional({ ...JSON_VALUE_SCHEMA, description: 'The reviewed value (absent: not there before)' })
  before?: unknown;
  @ApiPropertyOptional({ ...JSON_VALUE_SCHEMA, description: 'The value the upstream answers now (absent: gone)' })
  after?: unknown;
}

export class ChangeDeciderDto {
  @ApiProperty({ format: 'uuid' }) keyId!: string;
  @ApiProperty() name!: string;
}

export class SkillChangeDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) skillId!: string;
  @ApiProperty({ description: 'The tool’s name on the MCP server' }) tool!: string;
  @ApiProperty({
    enum: ['added', 'changed', 'removed'],
    description: 'added: a tool not served yet (new upstream, or a first import the rules flagged)',
  })
  kind!: 'added' | 'changed' | 'removed';
  @ApiProperty({ enum: ['pending', 'accepted', 'rejected', 'superseded'] }) status!: string;
  @ApiProperty({ description: 'The new input schema may refuse arguments the reviewed one accepts: the tool is withheld until a decision' })
  incompatible!: boolean;
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true, description: 'The reviewed upstream definition' })
  previous!: Record<string, unknown> | null;
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true, description: 'The definition the upstream answered' })
  proposed!: Record<string, unknown> | null;
  @ApiProperty({ type: String, nullable: true, description: 'sha256:<hex> of the proposed definition in canonical JSON' })
  proposedHash!: string | null;
  @ApiProperty({ type: [DefinitionDiffEntryDto] }) diff!: DefinitionDiffEntryDto[];
  @ApiProperty({ type: [DescriptionFlagDto], description: 'What the description rules found in the proposed definition' })
  flags!: DescriptionFlagDto[];
  @ApiProperty({ format: 'date-time' }) detectedAt!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) decidedAt!: string | null;
  @ApiProperty({ type: ChangeDeciderDto, nullable: true }) decidedBy!: ChangeDeciderDto | null;

  static from(change: SkillChangeRecord): SkillChangeDto {
    return {
      id: change.id,
      skillId: change.skillId,
      tool: change.tool,
      kind: change.kind,
      status: change.status,
      incompatible: change.incompatible,
      previous: change.previous as Record<string, unknown> | null,
      proposed: change.proposed as Record<string, unknown> | null,
      proposedHash: change.proposedHash,
      diff: change.diff,
      flags: change.flags,
      detectedAt: change.detectedAt.toISOString(),
      decidedAt: change.decidedAt?.toISOString() ?? null,
      decidedBy: change.decidedByKeyId ? { keyId: change.decidedByKeyId, name: change.decidedByName ?? '' } : null,
    };
  }
}

export class SkillChangeListResponseDto {
  @ApiProperty({ type: [SkillChangeDto] }) items!: SkillChangeDto[];
}

export class SkillRefreshResponseDto {
  @ApiProperty({ format: 'date-time' }) checkedAt!: string;
  @ApiProperty({ type: [SkillChangeDto], description: 'The changes waiting for review after this read' })
  pending!: SkillChangeDto[];
}
