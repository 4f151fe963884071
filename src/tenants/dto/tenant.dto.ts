import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  ValidateNested,
  IsRFC3339,
  IsString,
  IsUUID,
  Length,
  Matches,
  MaxLength,
} from 'class-validator';
import { KEY_ROLES, type KeyRole } from '../../common/auth/key-roles.js';
import type { ApiKey, Tenant } from '../../generated/prisma/client.js';
import type { TenantBudgetFigures } from '../../config/app-config.js';
import { BudgetFiguresDto, TenantBudgetsDto } from '../../budgets/dto/budgets.dto.js';

export class CreateTenantDto {
  @ApiProperty({
    example: 'acme',
    description: 'Unique tenant name: letters, digits, dot, dash, underscore; not shaped like a tenant id (a UUID)',
  })
  @IsString()
  @Length(1, 100)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: 'name may hold letters, digits, dot, dash and underscore' })
  name!: string;
}

export class CreateApiKeyDto {
  @ApiPropertyOptional({ example: 'ci', description: 'A label to tell keys apart ("default" when omitted)' })
  @IsOptional()
  @IsString()
  @Length(1, 100)
  name?: string;

  @ApiPropertyOptional({
    enum: KEY_ROLES,
    description:
      "admin (the default): everything in the tenant. agent: its projects' tools (list, invoke, batch, MCP) and their invocations and events. approver: read projects, invocations and events, approve and deny, browse workspaces.",
  })
  @IsOptional()
  @IsIn(KEY_ROLES)
  role?: KeyRole;

  @ApiPropertyOptional({
    type: [String],
    description: "The projects the key is bound to (the tenant's own): required for an agent, optional for an approver; others answer 404",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsUUID('all', { each: true })
  projectIds?: string[];

  @ApiPropertyOptional({
    type: [String],
    example: ['read_file', 'github_*'],
    description: 'An agent key only: the tools it may list and call; `*` may end a name. Without it, every tool of its projects.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @Matches(/^[A-Za-z0-9_.-]{0,128}\*?$/, { each: true, message: 'tools entries must be tool names, optionally ending in *' })
  @Length(1, 129, { each: true })
  tools?: string[];

  @ApiPropertyOptional({
    example: 'docs-reader',
    description:
      'An agent key with one projectIds entry only: the slug of a toolset of that project; the key may then use that toolset’s routes (…/toolsets/{slug}/tools, …/mcp) and nothing else',
  })
  @IsOptional()
  @IsString()
  @Matches(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, { message: 'toolset must be the slug of a toolset' })
  toolset?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'When the key stops working (RFC 3339, in the future)' })
  @IsOptional()
  @IsRFC3339()
  expiresAt?: string;

  @ApiPropertyOptional({
    description:
      'An admin or agent key: its calls may name the end user they are for with the Toolgate-User header, and tools then act with that person’s connections (default false: the header is refused)',
  })
  @IsOptional()
  @IsBoolean()
  actAsUsers?: boolean;
}

export class UpdateTenantDto {
  @ApiPropertyOptional({
    type: [String],
    example: ['/srv/repos/acme'],
    description:
      "Directories inside WORKSPACE_ALLOWED_ROOTS this tenant's keys may place project workspaces in (each existing, canonical, without symlinks, not an allowed root itself, not holding WORKSPACE_ROOT, not overlapping another tenant's roots or workspaces). [] takes the choice back.",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(4096, { each: true })
  workspaceRoots?: string[];

  @ApiPropertyOptional({
    type: TenantBudgetsDto,
    example: { maxProjects: 20, concurrentCommands: 2 },
    description:
      "This tenant's own budget figures, each overriding its TENANT_* default; a figure left out stays as it is, null puts it back to the default",
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => TenantBudgetsDto)
  budgets?: TenantBudgetsDto;
}

export class TenantResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: [String], description: 'Directories the operator granted this tenant for its project workspaces' })
  workspaceRoots!: string[];
  @ApiProperty({
    type: BudgetFiguresDto,
    description: 'The budgets in force for this tenant: the TENANT_* defaults with its own figures on top',
  })
  budgets!: BudgetFiguresDto;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;

  static from(t: Tenant, budgets: TenantBudgetFigures): TenantResponseDto {
    return {
      id: t.id,
      name: t.name,
      workspaceRoots: t.workspaceRoots,
      budgets,
      createdAt: t.createdAt.toISOString(),
      updatedAt: t.updatedAt.toISOString(),
    };
  }
}

export class ApiKeyResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ example: '3f9a1c0b7d2e', description: 'The public part of the key: tg_<prefix>_…' }) prefix!: string;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) lastUsedAt!: string | null;
  @ApiProperty({ enum: KEY_ROLES }) role!: KeyRole;
  @ApiProperty({ type: [String], description: 'The projects the key is bound to; empty: every project of the tenant' })
  projectIds!: string[];
  @ApiProperty({ type: [String], description: 'The tools an agent key may use; empty: every tool' }) tools!: string[];
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) expiresAt!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The toolset (slug) an agent key is bound to; null: none' }) toolset!:
    string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      "An OAuth access token (named for its client): the project MCP URL it is accepted at only. Revoking it ends the client's consent. null: an API key",
  })
  oauthResource!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description:
      "An OAuth access token: the key of the person who consented to its client (revoking that key ends the consent; it cannot decide this token's parked calls). null: an API key",
  })
  oauthConsentedByKeyId!: string | null;
  @ApiProperty({
    description:
      "Every call of the key waits for a person's approval, whatever the project says: an OAuth client signed in by an approver key",
  })
  parksEveryCall!: boolean;
  @ApiProperty({ description: 'Its calls may name their end user (Toolgate-User)' })
  actAsUsers!: boolean;

  static from(k: ApiKey & { oauthGrant?: { decidedByKeyId: string } | null }): ApiKeyResponseDto {
    return {
      id: k.id,
      name: k.name,
      prefix: k.prefix,
      createdAt: k.createdAt.toISOString(),
      lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
      role: k.role as KeyRole,
      projectIds: k.projectIds,
      tools: k.tools,
      expiresAt: k.expiresAt?.toISOString() ?? null,
      toolset: k.toolset,
      oauthResource: k.oauthResource,
      oauthConsentedByKeyId: k.oauthGrant?.decidedByKeyId ?? null,
      parksEveryCall: k.parksEveryCall,
      actAsUsers: k.actAsUsers,
    };
  }
}

export class CreatedApiKeyResponseDto extends ApiKeyResponseDto {
  @ApiProperty({ description: 'The full key. It is shown this once and cannot be recovered.' })
  key!: string;

  @ApiProperty({ format: 'uuid' }) tenantId!: string;
}

export class TenantListResponseDto {
  @ApiProperty({ type: [TenantResponseDto] }) items!: TenantResponseDto[];
}

export class ApiKeyListResponseDto {
  @ApiProperty({ type: [ApiKeyResponseDto] }) items!: ApiKeyResponseDto[];
}
