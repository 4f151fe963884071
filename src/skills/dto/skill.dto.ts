import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import type { SkillRecord } from '../skills.repository.js';
import { maskExecutorSecrets, maskSourceSecrets } from '../skill-secrets.js';

export class SkillResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() version!: string;
  @ApiProperty() description!: string;
  @ApiProperty({
    type: 'array',
    items: { type: 'object' },
    description:
      'The tools as registered, each with its `pin` (the SHA-256 `hash` of the reviewed definition, `reviewedAt`, for an MCP source the upstream definition and what the description rules flagged) and, while it is not served, `withheld` ("flagged" or "incompatible_change"); the URLs and header values of http and mcp executors are stored encrypted: header values are shown as "[stored encrypted]", and so are the values of credential-like query parameters of a URL (api_key, token, sig …)',
  })
  tools!: unknown[];
  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description:
      'The MCP server the tools were imported from (url and header values masked as in tools), read again every MCP_SOURCE_REFRESH_S; null for a tenant’s own tools',
  })
  source!: Record<string, unknown> | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;

  static from(skill: SkillRecord): SkillResponseDto {
    return {
      id: skill.id,
      name: skill.name,
      version: skill.version,
      description: skill.description,
      tools: maskExecutorSecrets(skill.tools),
      source: skill.source ? { ...maskSourceSecrets(skill.source) } : null,
      createdAt: skill.createdAt.toISOString(),
      updatedAt: skill.updatedAt.toISOString(),
    };
  }
}

export class RegisteredSkillResponseDto extends SkillResponseDto {
  @ApiProperty({
    description: 'Key of the X-Toolgate-Signature header (sha256=<hex HMAC-SHA256 of the body>) sent to http executors. Shown this once.',
  })
  signingSecret!: string;
}

export class SkillListResponseDto {
  @ApiProperty({ type: [SkillResponseDto] }) items!: SkillResponseDto[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}

export class EnableSkillDto {
  @ApiProperty({ format: 'uuid' })
  @IsString()
  @MaxLength(64)
  skillId!: string;
}

export class ProjectSkillResponseDto {
  @ApiProperty({ format: 'uuid' }) projectId!: string;
  @ApiProperty({ type: SkillResponseDto }) skill!: SkillResponseDto;
  @ApiProperty({ format: 'date-time' }) enabledAt!: string;
}

export class ProjectSkillListResponseDto {
  @ApiProperty({ type: [SkillResponseDto] }) items!: SkillResponseDto[];
}
