import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, IsString, Length, MaxLength, ValidateNested } from 'class-validator';
import { KEY_ROLES, type KeyRole } from '../../common/auth/key-roles.js';
import type { PolicyRecord } from '../policies.repository.js';

export const POLICY_TEXT_MAX_CHARS = 65_536;

const EXAMPLE = `@id("writes-stay-in-docs")
@reason("Files may only be written under docs/")
forbid (principal, action == Toolgate::Action::"call", resource)
when { ["write_file", "edit_file", "move_file"].contains(resource.name) && context has path && !(context.path like "docs/*") };`;

export class PolicyBodyDto {
  @ApiProperty({ example: EXAMPLE, description: 'A Cedar policy set, validated against GET /v1/policies/schema; empty: no policies' })
  @IsString()
  @MaxLength(POLICY_TEXT_MAX_CHARS)
  text!: string;
}

export class PolicySetByDto {
  @ApiProperty({ format: 'uuid', description: 'The admin key that set the policies' }) keyId!: string;
  @ApiProperty({ nullable: true, type: String, description: "That key's name" }) name!: string | null;
}

export class PolicyResponseDto {
  @ApiProperty({ enum: ['tenant', 'project'] }) scope!: 'tenant' | 'project';
  @ApiProperty({ description: 'The policy set in force; empty when none was set' }) text!: string;
  @ApiProperty({ description: '0 before any was set, then one more on every change' }) version!: number;
  @ApiProperty({ type: () => PolicySetByDto, nullable: true, description: 'Who set it (null: never set)' }) setBy!: PolicySetByDto | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) updatedAt!: string | null;

  static from(scope: 'tenant' | 'project', record: PolicyRecord | null): PolicyResponseDto {
    if (!record) return { scope, text: '', version: 0, setBy: null, updatedAt: null };
    return {
      scope,
      text: record.text,
      version: record.version,
      setBy: record.setByKeyId === null ? null : { keyId: record.setByKeyId, name: record.setByName },
      updatedAt: record.updatedAt.toISOString(),
    };
  }
}

export class PolicySchemaResponseDto {
  @ApiProperty({ example: 'Toolgate' }) namespace!: string;
  @ApiProperty({ description: 'The Cedar schema (human-readable syntax) every policy set is validated against' }) text!: string;
  @ApiProperty({ description: 'Which Cedar version evaluates the policies', example: '4.13.0' }) cedarVersion!: string;
}

export class PolicyCheckAsDto {
  @ApiPropertyOptional({ enum: KEY_ROLES, description: "The role to decide as (default: the calling key's)" })
  @IsOptional()
  @IsIn(KEY_ROLES)
  role?: KeyRole;
  @ApiPropertyOptional({ description: "The key name to decide as (default: the calling key's)" })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  keyName?: string;
  @ApiPropertyOptional({ description: 'Decide as an OAuth access token issued to this client' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  oauthClient?: string;
}

export class PolicyCheckBodyDto {
  @ApiProperty({ example: 'write_file' }) @IsString() @Length(1, 128) tool!: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { path: 'src/index.ts', content: '' },
    description: 'The arguments, as the tool takes them',
  })
  @IsOptional()
  @IsObject()
  arguments?: Record<string, unknown>;
  @ApiPropertyOptional({ type: () => PolicyCheckAsDto, description: 'Decide as another principal than the calling key' })
  @IsOptional()
  @ValidateNested()
  @Type(() => PolicyCheckAsDto)
  as?: PolicyCheckAsDto;
}

export class DeterminingPolicyDto {
  @ApiProperty({ example: 'writes-stay-in-docs', description: "The policy's @id (else policy<N>, its place in its set)" }) id!: string;
  @ApiProperty({ enum: ['tenant', 'project'] }) scope!: string;
  @ApiProperty({ nullable: true, type: String, description: 'Its @reason annotation' }) reason!: string | null;
}

export class PolicyCheckResponseDto {
  @ApiProperty({
    enum: ['allow', 'forbid', 'ask'],
    description: 'forbid: refused (forbidden_by_policy); ask: parked for a person; allow: runs (unless approvalRequired parks it)',
  })
  decision!: 'allow' | 'forbid' | 'ask';
  @ApiProperty({ type: [DeterminingPolicyDto], description: 'The policies that determined the decision' })
  policies!: DeterminingPolicyDto[];
  @ApiProperty({ description: 'Whether any policy is in force for the project (tenant or project)' }) policyInForce!: boolean;
  @ApiProperty({ description: 'Whether the call would wait for a person (a policy asks, or approvalRequired covers the tool)' })
  wouldPark!: boolean;
}
