import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppError } from '../common/errors/app-error.js';
import { Public } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { CLIENT_METADATA_PATH, clientMetadata } from './mcp-auth-discovery.js';

// Toolgate's client ID metadata document: an authorization server that takes one (MCP authorization) fetches
// it from the URL that is Toolgate's client_id there. The same for every caller; it names no tenant.
@ApiTags('connections')
@Public('Read by authorization servers, which hold no key: Toolgate’s client ID metadata document, the same for every caller')
@Controller(CLIENT_METADATA_PATH.slice(1))
export class ClientMetadataController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get()
  @Header('Cache-Control', 'public, max-age=3600')
  @ApiOperation({
    operationId: 'getClientMetadataDocument',
    summary: 'Toolgate’s OAuth client ID metadata document (its URL is the client_id)',
  })
  @ApiOkResponse({
    schema: { type: 'object', additionalProperties: true },
    description: '{client_id, client_name, redirect_uris, grant_types, response_types, token_endpoint_auth_method: none}',
  })
  @ApiNotFoundResponse({
    type: ErrorResponseDto,
    description: 'client_metadata_not_published: without PUBLIC_URL Toolgate has no stable client_id, so no document',
  })
  document(): Record<string, unknown> {
    if (this.config.oauth.publicUrl === null) throw notPublished();
    return clientMetadata(this.config.oauth.publicUrl);
  }
}

const notPublished = () =>
  new AppError(
    404,
    'client_metadata_not_published',
    'Toolgate publishes no client metadata document without PUBLIC_URL: its URL is the client_id and must be stable',
  );
