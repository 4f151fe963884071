import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]{1,256}$/;
const API_HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

export class CreateAuthProviderDto {
  @ApiProperty({ example: 'github', description: 'What skills name it by (auth.provider): lower-case letters, digits and dashes' })
  @IsString()
  @Matches(SLUG, { message: 'slug must be lower-case letters, digits and dashes (1-64)' })
  slug!: string;

  @ApiProperty({ example: 'GitHub' })
  @IsString()
  @Length(1, 100)
  name!: string;

  @ApiPropertyOptional({
    example: 'https://accounts.example.com',
    description:
      'The authorization server. Alone, its endpoints are read from its discovery document (OpenID, then RFC 8414); with the endpoints, the issuer the answers must name (RFC 9207)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  issuer?: string;

  @ApiPropertyOptional({ example: 'https://github.com/login/oauth/authorize' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  authorizationUrl?: string;

  @ApiPropertyOptional({ example: 'https://github.com/login/oauth/access_token' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  tokenUrl?: string;

  @ApiPropertyOptional({ description: 'RFC 7009 revocation endpoint: a deleted connection is revoked there too' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  revocationUrl?: string;

  @ApiProperty({ description: 'The client id Toolgate is registered under at the provider' })
  @IsString()
  @Length(1, 512)
  clientId!: string;

  @ApiProperty({ writeOnly: true, description: 'Stored sealed; never shown again' })
  @IsString()
  @Length(1, 4096)
  clientSecret!: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['repo', 'read:user'],
    description: 'Asked for in every connection (a skill may add its own)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @Matches(SCOPE, { each: true, message: 'each scope is 1-256 visible ASCII characters without spaces, quotes or backslashes' })
  scopes?: string[];

  @ApiProperty({ type: [String], example: ['api.github.com'], description: 'The only hosts (host or host:port) its tokens are sent to' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @Matches(API_HOST, { each: true, message: 'each apiHosts entry is a host name or address, optionally with :port' })
  apiHosts!: string[];

  @ApiPropertyOptional({
    example: 'https://app.example.com/connections/verify',
    description:
      'Your app’s page the person’s browser is sent to after the provider, with a one-time `flow` id; the connection stays pending until your app confirms the same user with POST /v1/connections/verify (within 10 minutes). Without it a connection is active at the callback',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  verifyUrl?: string;
}

export class UpdateAuthProviderDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @Length(1, 100) name?: string;
  @ApiPropertyOptional({ description: 'A new issuer alone is discovered again' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  issuer?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(2048) authorizationUrl?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(2048) tokenUrl?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(2048) revocationUrl?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @Length(1, 512) clientId?: string;
  @ApiPropertyOptional({ writeOnly: true }) @IsOptional() @IsString() @Length(1, 4096) clientSecret?: string;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @Matches(SCOPE, { each: true, message: 'each scope is 1-256 visible ASCII characters without spaces, quotes or backslashes' })
  scopes?: string[];

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @Matches(API_HOST, { each: true, message: 'each apiHosts entry is a host name or address, optionally with :port' })
  apiHosts?: string[];

  @ApiPropertyOptional({ nullable: true, type: String, description: 'null: connections become active at the callback again' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  verifyUrl?: string | null;
}

export class AuthProviderResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() slug!: string;
  @ApiProperty() name!: string;
  @ApiProperty() issuer!: string;
  @ApiProperty() authorizationUrl!: string;
  @ApiProperty() tokenUrl!: string;
  @ApiProperty({ nullable: true, type: String }) revocationUrl!: string | null;
  @ApiProperty({ description: 'Whether the endpoints came from the issuer’s discovery document' }) discovered!: boolean;
  @ApiProperty() clientId!: string;
  @ApiProperty({ type: [String] }) scopes!: string[];
  @ApiProperty({ type: [String] }) apiHosts!: string[];
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Where the browser goes with a flow id your app confirms; null: active at the callback',
  })
  verifyUrl!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Register this redirect URI at the provider: <PUBLIC_URL>/v1/connections/callback (null without PUBLIC_URL)',
  })
  redirectUri!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
}

export class AuthProviderListResponseDto {
  @ApiProperty({ type: [AuthProviderResponseDto] }) items!: AuthProviderResponseDto[];
}
