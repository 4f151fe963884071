import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

export class ListFilesQueryDto {
  @ApiPropertyOptional({ description: 'Directory relative to the workspace (default: its root)', default: '' })
  @IsOptional()
  @IsString()
  @MaxLength(8192)
  path?: string;

  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value,
  )
  @IsBoolean()
  recursive?: boolean;
}

export class ReadFileQueryDto {
  @ApiProperty({ description: 'File relative to the workspace' })
  @IsString()
  @MaxLength(8192)
  path!: string;

  @ApiPropertyOptional({ enum: ['utf8', 'base64'], default: 'utf8' })
  @IsOptional()
  @IsIn(['utf8', 'base64'])
  encoding?: 'utf8' | 'base64';
}

export class WorkspaceEntryDto {
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'Relative to the workspace root' }) path!: string;
  @ApiProperty({ enum: ['file', 'directory', 'symlink', 'other'] }) type!: 'file' | 'directory' | 'symlink' | 'other';
  @ApiProperty({ description: 'Bytes' }) size!: number;
  @ApiProperty({ format: 'date-time' }) modified!: string;
}

export class WorkspaceListingDto {
  @ApiProperty() path!: string;
  @ApiProperty({ type: [WorkspaceEntryDto] }) entries!: WorkspaceEntryDto[];
  @ApiProperty({ description: 'More entries exist than were returned' }) truncated!: boolean;
}

export class WorkspaceFileDto {
  @ApiProperty() path!: string;
  @ApiProperty({ enum: ['utf8', 'base64'] }) encoding!: 'utf8' | 'base64';
  @ApiProperty() content!: string;
  @ApiProperty({ description: 'Size of the whole file in bytes' }) size!: number;
  @ApiProperty({ description: 'content holds less than the whole file (capped by WORKSPACE_FILE_MAX_BYTES)' })
  truncated!: boolean;
}
