import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export class OAuthClientViewDto {
  @ApiProperty({ description: 'The client_id: a metadata document URL, or the id given at registration' }) id!: string;
  @ApiProperty({ description: 'The name the client gave itself' }) name!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'The origin its Client ID Metadata Document was fetched from (so the name is vouched for by that origin); null for a client that registered itself (RFC 7591), whose name is only its own claim',
  })
  verifiedOrigin!: string | null;
}

export class OAuthRequestProjectDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
}

export class OAuthRequestViewDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ type: OAuthClientViewDto }) client!: OAuthClientViewDto;
  @ApiProperty({ description: 'Where the browser is sent back with the code' }) redirectUri!: string;
  @ApiProperty({ description: "The MCP URL the token is for (RFC 8707's resource)" }) resource!: string;
  @ApiProperty({ type: OAuthRequestProjectDto }) project!: OAuthRequestProjectDto;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "The toolset's slug when the resource is a toolset's MCP URL: the client sees only that toolset; null: the project's whole MCP server",
  })
  toolset!: string | null;
  @ApiProperty({ type: [String] }) scopes!: string[];
  @ApiProperty({ format: 'date-time', description: 'A decision after this is refused; the client starts again' }) expiresAt!: string;
  @ApiProperty({
    description:
      "true when the key reading this is an approver's: an approver lends no power to call tools, so each call of a client it signs in waits for another person's approval",
  })
  callsNeedApproval!: boolean;
}

export class OAuthDecisionDto {
  @ApiProperty({ description: 'true: issue a code for the client; false: answer access_denied' })
  @IsBoolean()
  approve!: boolean;

  @ApiPropertyOptional({
    type: [String],
    example: ['read_file', 'search_files'],
    description: 'The tools the client may list and call (a name, or a prefix ending in *); absent or empty: every tool of the project',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(128, { each: true })
  @Matches(/^[A-Za-z0-9_.-]+\*?$|^\*$/, { each: true, message: 'each tool must be a tool name, or a prefix ending in *' })
  tools?: string[];

  @ApiPropertyOptional({
    minimum: 60,
    maximum: 31_536_000,
    description:
      "Seconds the consent lasts (no token outlives it); absent: 30 days. Never past the deciding key's own expiry, and it ends when that key is revoked",
  })
  @IsOptional()
  @IsInt()
  @Min(60)
  @Max(31_536_000)
  expiresIn?: number;
}

export class OAuthDecisionResponseDto {
  @ApiProperty({
    description: "The client's redirect URI with code, state and iss (approved) or error=access_denied (denied): send the browser there",
  })
  redirectTo!: string;
}
