import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, Length, Matches, MaxLength, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/cursor.js';

export const CONNECTION_STATUSES = ['pending', 'active', 'expired', 'revoked'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

export class AuthorizeConnectionDto {
  @ApiProperty({ example: 'github', description: 'The auth provider’s slug' })
  @IsString()
  @Length(1, 64)
  provider!: string;

  @ApiPropertyOptional({
    example: 'alice@example.com',
    description: 'The end user the connection is for (as Toolgate-User names them); absent: the tenant’s own connection',
  })
  // Absent means the tenant's own connection; null is not taken for that (it answers 400 like any non-string).
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @MaxLength(1024)
  user?: string;

  @ApiPropertyOptional({ type: [String], description: 'Scopes to ask for besides the provider’s own' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @Matches(/^[\x21\x23-\x5B\x5D-\x7E]{1,256}$/, {
    each: true,
    message: 'each scope is 1-256 visible ASCII characters without spaces, quotes or backslashes',
  })
  scopes?: string[];

  @ApiPropertyOptional({
    example: 'https://app.example.com/settings',
    description: 'Where the person’s browser goes once connected (http or https)',
  })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @MaxLength(2048)
  returnTo?: string;
}

export class AuthorizationLinkDto {
  @ApiProperty({ format: 'uuid', description: 'The connection it makes (pending until the person completes it)' }) id!: string;
  @ApiProperty({ description: 'Open once, within 10 minutes, in the person’s browser' }) authorizationUrl!: string;
  @ApiProperty({ format: 'date-time' }) expiresAt!: string;
}

export class ListConnectionsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Only this end user’s connections' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  user?: string;

  @ApiPropertyOptional({ description: 'Only connections to this provider (slug)' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  provider?: string;
}

export class ConnectionResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ description: 'The provider’s slug' }) provider!: string;
  @ApiProperty({ nullable: true, type: String, description: 'The end user; null: the tenant’s own connection' }) user!: string | null;
  @ApiProperty({ enum: CONNECTION_STATUSES }) status!: ConnectionStatus;
  @ApiProperty({ type: [String] }) scopes!: string[];
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'pending: when the link expires; active: when the access token does (it is refreshed)',
  })
  expiresAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) lastUsedAt!: string | null;
}

export class ConnectionListResponseDto {
  @ApiProperty({ type: [ConnectionResponseDto] }) items!: ConnectionResponseDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as ?cursor= for the next page; null on the last' })
  nextCursor!: string | null;
}

export class VerifyConnectionDto {
  @ApiProperty({ description: 'The one-time flow id your verifyUrl page received in its query' })
  @IsString()
  @Length(1, 512)
  flow!: string;

  @ApiProperty({
    example: 'alice@example.com',
    description: 'The user signed in to your app in that browser: the connection becomes active only if it is the link’s user',
  })
  @IsString()
  @MaxLength(1024)
  user!: string;
}

export class VerifiedConnectionDto extends ConnectionResponseDto {
  @ApiProperty({ nullable: true, type: String, description: 'The link’s returnTo, for your app to send the person on to' }) returnTo!:
    string | null;
}
