import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsByteLength,
  IsOptional,
  IsString,
  Length,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import type { Project } from '../../generated/prisma/client.js';
import { AdminWorkspaceResponseDto } from '../../workspace/dto/workspace.dto.js';

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const SLUG_MESSAGE = 'slug must be 1-64 lowercase letters, digits or dashes, not starting or ending with a dash';

// Shell settings, the same on create and update.
class ProjectShellSettingsDto {
  // No `default` here: generators such as openapi-typescript would make a property with one required.
  @ApiPropertyOptional({
    description: 'Allow shell_exec in this project (only executables on shellAllowlist run); false when a project is created without it',
  })
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
  // PATH_MAX, in bytes: no longer path names an executable, and each entry is kept in the project's row.
  @IsByteLength(1, 4096, { each: true })
  @Matches(/^(\/[^\0]+|[A-Za-z0-9._+-]+)$/, { each: true, message: 'shellAllowlist entries must be executable names or absolute paths' })
  shellAllowlist?: string[];

  @ApiPropertyOptional({
    type: [String],
    example: ['delete_file', 'shell_exec'],
    description:
      "Tools (built-in or from the project's skills) whose calls wait for a person: parked with 202 pending_approval until approved or denied",
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
    example: '/srv/repos/acme/docs-site',
    description:
      'An existing directory inside one of the roots the operator granted this tenant (403 workspace_path_operator_only when it has none). Without it the project gets its own directory under WORKSPACE_ROOT.',
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

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description:
      "Inside one of the tenant's granted roots, as on create (403 workspace_path_operator_only when it has none); null clears it",
  })
  @ValidateIf((_, value) => value !== null && value !== undefined)
  @IsString()
  @MaxLength(4096)
  workspacePath?: string | null;
}

export class ProjectResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      "The workspacePath when it lies inside one of the tenant's granted roots; null otherwise (the project's own directory, or one the operator placed: GET …/workspace says which)",
  })
  workspacePath!: string | null;
  @ApiProperty() shellEnabled!: boolean;
  @ApiProperty({ type: [String] }) shellAllowlist!: string[];
  @ApiProperty({ type: [String], description: 'Tools whose calls wait for approval' }) approvalRequired!: string[];
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;

  // `tenantRoots`: the roots granted to the tenant who asks; a path outside them is the operator's to show.
  static from(p: Project, tenantRoots: readonly string[]): ProjectResponseDto {
    const shown = p.workspacePath !== null && tenantRoots.some((r) => p.workspacePath === r || p.workspacePath!.startsWith(`${r}/`));
    return {
      id: p.id,
      name: p.name,
      slug: p.slug,
      workspacePath: shown ? p.workspacePath : null,
      shellEnabled: p.shellEnabled,
      shellAllowlist: p.shellAllowlist,
      approvalRequired: p.approvalRequired,
      createdAt: p.createdAt.toISOString(),
      updatedAt: p.updatedAt.toISOString(),
    };
  }
}

// The operator places a project's workspace.
export class AdminUpdateProjectDto {
  @ApiProperty({
    nullable: true,
    type: String,
    example: '/srv/repos/acme/docs-site',
    description:
      "An existing directory inside WORKSPACE_ALLOWED_ROOTS, not an allowed root itself, not holding WORKSPACE_ROOT, not overlapping another tenant's directories, without a symlink in its path; null gives the project back its own directory under WORKSPACE_ROOT",
  })
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(4096)
  workspacePath!: string | null;
}

export class AdminProjectResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) tenantId!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiProperty({ nullable: true, type: String, description: 'The stored workspacePath (absolute), or null' }) workspacePath!: string | null;
  @ApiProperty({
    type: AdminWorkspaceResponseDto,
    nullable: true,
    description: 'Where its tools run now; null while the workspace is unavailable (gone, or a symlink in its path: the log says which)',
  })
  workspace!: AdminWorkspaceResponseDto | null;

  static fromAdmin(p: Project, workspace: AdminWorkspaceResponseDto | null): AdminProjectResponseDto {
    return {
      id: p.id,
      tenantId: p.tenantId,
      name: p.name,
      slug: p.slug,
      workspacePath: p.workspacePath,
      workspace: workspace && { path: workspace.path, source: workspace.source },
    };
  }
}

export class ProjectListResponseDto {
  @ApiProperty({ type: [ProjectResponseDto] }) items!: ProjectResponseDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as ?cursor= for the next page; null on the last' })
  nextCursor!: string | null;
}
