import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import type { TenantBudgetFigures } from '../../config/app-config.js';
import type { TenantUsage } from '../tenant-budgets.js';

// One tenant's figures, each overriding its TENANT_* default; null puts a figure back to the default.
export class TenantBudgetsDto {
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 1, description: 'Projects the tenant may have (TENANT_MAX_PROJECTS)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  maxProjects?: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 1, description: 'Commands of the tenant running at once, on every instance together (TENANT_CONCURRENT_COMMANDS)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000)
  concurrentCommands?: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 16777216, description: 'The memory limits of its running commands added up (TENANT_COMMAND_MEMORY_BYTES)' })
  @IsOptional()
  @IsInt()
  @Min(16 * 1024 * 1024)
  @Max(2 ** 50)
  commandMemoryBytes?: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 1048576, description: "Bytes of answers kept for it: idempotency keys' answers and parked calls' outcomes (TENANT_STORED_ANSWER_BYTES)" })
  @IsOptional()
  @IsInt()
  @Min(1024 * 1024)
  @Max(2 ** 50)
  storedAnswerBytes?: number | null;
}

export class BudgetFiguresDto implements TenantBudgetFigures {
  @ApiProperty() maxProjects!: number;
  @ApiProperty() concurrentCommands!: number;
  @ApiProperty() commandMemoryBytes!: number;
  @ApiProperty() storedAnswerBytes!: number;
}

export class UsageFiguresDto implements TenantUsage {
  @ApiProperty({ description: 'Projects it has' }) maxProjects!: number;
  @ApiProperty({ description: 'Commands running now, on every instance' }) concurrentCommands!: number;
  @ApiProperty({ description: 'Memory limits of those commands, added up' }) commandMemoryBytes!: number;
  @ApiProperty({ description: 'Bytes of stored answers now kept' }) storedAnswerBytes!: number;
}

export class TenantUsageResponseDto {
  @ApiProperty({ format: 'uuid' }) tenantId!: string;
  @ApiProperty({ type: BudgetFiguresDto, description: 'The budgets in force (defaults with this tenant’s own figures on top)' }) budgets!: BudgetFiguresDto;
  @ApiProperty({ type: UsageFiguresDto, description: 'What it holds now, budget by budget' }) usage!: UsageFiguresDto;
}
