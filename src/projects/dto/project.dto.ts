import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, IsString, Length, Matches, MaxLength, ValidateIf } from 'class-validator';
import type { Project } from '../../generated/prisma/client.js';

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const SLUG_MESSAGE = 'slug must be 1-64 lowercase letters, digits or dashes, not starting or ending with a dash';

// Shell settings, the same on create and update.
class ProjectShellSettingsDto {
  // No `default` here: generators such as openapi-typescript would make a property with one required.
  @ApiPropertyOptional({ description: 'Allow shell_exec in this project (only executables on shellAllowlist run); false when a project is created without it' })
  @IsOptional()
  @IsBoolean()
  shellEnabled?: boolean;

  @ApiPropertyOptional({
    type: [String],
    example: ['git', 'ls', 'npm'],
    description: 'Executables shell_exec may run: bare names looked up on PATH, or absolute paths',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Matches(/^(\/[^\0]+|[A-Za-z0-9._+-]+)$/, { each: true, message: 'shellAllowlist entries must be executable names or absolute paths' })
  shellAllowlist?: string[];

  @ApiPropertyOptional({
    type: [String],
    example: ['delete_file', 'shell_exec'],
    description: "Tools (built-in or from the project's skills) whose calls wait for a person: parked with 202 pending_approval until approved or denied",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(128, { each: true })
  approvalRequired?: string[];
}

export class CreateProjectDto extends ProjectShellSettingsDto {
  @ApiProperty({ example: 'Docs site' })
  @IsString()
  @Length(1, 200)
  name!: string;

  @ApiProperty({ example: 'docs-site', description: 'Unique within the tenant', pattern: SLUG.source })
  @IsString()
  @Matches(SLUG, { message: SLUG_MESSAGE })
  slug!: string;

  @ApiPropertyOptional({
    example: '/srv/toolgate/workspaces/docs-site',
    description: 'An existing directory inside an allowed root (WORKSPACE_ALLOWED_ROOTS)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  workspacePath?: string;
}

export class UpdateProjectDto extends ProjectShellSettingsDto {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional({ pattern: SLUG.source })
  @IsOptional()
  @IsString()
  @Matches(SLUG, { message: SLUG_MESSAGE })
  slug?: string;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'null clears it' })
  @ValidateIf((_, value) => value !== null && value !== undefined)
  @IsString()
  @MaxLength(4096)
  workspacePath?: string | null;
}

export class ProjectResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiProperty({ nullable: true, type: String }) workspacePath!: string | null;
  @ApiProperty() shellEnabled!: boolean;
  @ApiProperty({ type: [String] }) shellAllowlist!: string[];
  @ApiProperty({ type: [String], description: 'Tools whose calls wait for approval' }) approvalRequired!: string[];
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;

  static from(p: Project): ProjectResponseDto {
    return {
      id: p.id,
      name: p.name,
      slug: p.slug,
      workspacePath: p.workspacePath,
      shellEnabled: p.shellEnabled,
      shellAllowlist: p.shellAllowlist,
      approvalRequired: p.approvalRequired,
      createdAt: p.createdAt.toISOString(),
      updatedAt: p.updatedAt.toISOString(),
    };
  }
}

export class ProjectListResponseDto {
  @ApiProperty({ type: [ProjectResponseDto] }) items!: ProjectResponseDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as ?cursor= for the next page; null on the last' })
  nextCursor!: string | null;
}
