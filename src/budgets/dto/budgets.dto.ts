import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import type { TenantBudgetFigures } from '../../config/app-config.js';
import type { TenantUsage } from '../tenant-usage.js';

// One tenant's figures, each overriding its TENANT_* default; null puts a figure back to the default.
export class TenantBudgetsDto {
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 1, description: 'Projects the tenant may have (TENANT_MAX_PROJECTS)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  maxProjects?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description: 'Skills the tenant may have registered (TENANT_MAX_SKILLS)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  maxSkills?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description: 'Toolsets of all its projects together (TENANT_MAX_TOOLSETS)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  maxToolsets?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description: 'Commands of the tenant running at once, on every instance together (TENANT_CONCURRENT_COMMANDS)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000)
  concurrentCommands?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 16777216,
    description: 'The memory limits of its running commands added up (TENANT_COMMAND_MEMORY_BYTES)',
  })
  @IsOptional()
  @IsInt()
  @Min(16 * 1024 * 1024)
  @Max(2 ** 50)
  commandMemoryBytes?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1048576,
    description:
      "Bytes of answers kept for it: idempotency keys' answers, parked calls' arguments while they wait and their outcomes, MCP tasks' results (TENANT_STORED_ANSWER_BYTES)",
  })
  @IsOptional()
  @IsInt()
  @Min(1024 * 1024)
  @Max(2 ** 50)
  storedAnswerBytes?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description: 'Tool calls of the tenant in progress at once, on each instance (TENANT_CONCURRENT_CALLS)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  concurrentCalls?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1048576,
    description: 'Bytes of its answers an instance has written and its clients not yet read, on each instance (TENANT_UNREAD_ANSWER_BYTES)',
  })
  @IsOptional()
  @IsInt()
  @Min(1024 * 1024)
  @Max(2 ** 50)
  unreadAnswerBytes?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1048576,
    description:
      'Bytes of text (arguments, error messages) its audit rows keep in full per UTC day, on each instance; past it, short previews (TENANT_AUDIT_BYTES_PER_DAY)',
  })
  @IsOptional()
  @IsInt()
  @Min(1024 * 1024)
  @Max(2 ** 50)
  auditBytesPerDay?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1048576,
    description: "Disk space of all its projects' workspaces together (TENANT_STORAGE_BYTES)",
  })
  @IsOptional()
  @IsInt()
  @Min(1024 * 1024)
  @Max(2 ** 50)
  storageBytes?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 100,
    description: "Files, directories and links of all its projects' workspaces together (TENANT_STORAGE_INODES)",
  })
  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(2 ** 31)
  storageInodes?: number | null;
}

export class BudgetFiguresDto implements TenantBudgetFigures {
  @ApiProperty() maxProjects!: number;
  @ApiProperty() maxSkills!: number;
  @ApiProperty() maxToolsets!: number;
  @ApiProperty() concurrentCommands!: number;
  @ApiProperty() commandMemoryBytes!: number;
  @ApiProperty() storedAnswerBytes!: number;
  @ApiProperty() concurrentCalls!: number;
  @ApiProperty() unreadAnswerBytes!: number;
  @ApiProperty() auditBytesPerDay!: number;
  @ApiProperty() storageBytes!: number;
  @ApiProperty() storageInodes!: number;
}

export class UsageFiguresDto implements TenantUsage {
  @ApiProperty({ description: 'Projects it has' }) maxProjects!: number;
  @ApiProperty({ description: 'Skills it has registered' }) maxSkills!: number;
  @ApiProperty({ description: 'Toolsets of all its projects' }) maxToolsets!: number;
  @ApiProperty({ description: 'Commands running now, on every instance' }) concurrentCommands!: number;
  @ApiProperty({ description: 'Memory limits of those commands, added up' }) commandMemoryBytes!: number;
  @ApiProperty({ description: 'Bytes now kept of stored answers, parked calls (arguments, then outcomes) and MCP task results' })
  storedAnswerBytes!: number;
  @ApiProperty({ description: 'Tool calls in progress now on the instance that answered' }) concurrentCalls!: number;
  @ApiProperty({ description: 'Bytes of its answers the instance that answered holds until its clients read them' })
  unreadAnswerBytes!: number;
  @ApiProperty({ description: 'Bytes of text its audit rows kept in full today (UTC) on the instance that answered' })
  auditBytesPerDay!: number;
  @ApiProperty({ description: 'Disk space its workspaces use, added up (measured, at most 30 s old)' }) storageBytes!: number;
  @ApiProperty({ description: 'Files, directories and links in its workspaces, added up' }) storageInodes!: number;
}

export class TenantUsageResponseDto {
  @ApiProperty({ format: 'uuid' }) tenantId!: string;
  @ApiProperty({ type: BudgetFiguresDto, description: 'The budgets in force (defaults with this tenant’s own figures on top)' })
  budgets!: BudgetFiguresDto;
  @ApiProperty({ type: UsageFiguresDto, description: 'What it holds now, budget by budget' }) usage!: UsageFiguresDto;
}
