import { Module } from '@nestjs/common';
import { ProjectAccessModule } from '../projects/project-access.module.js';
import { TenantsModule } from '../tenants/tenants.module.js';
import { ClientMetadataDocuments } from './client-metadata.js';
import { OAuthAuthorizationService } from './oauth-authorization.service.js';
import { OAuthRequestsController } from './oauth-requests.controller.js';
import { OAuthTokensService } from './oauth-tokens.service.js';
import { OAuthWellKnownController } from './oauth-well-known.controller.js';
import { OAuthController } from './oauth.controller.js';
import { OAuthRepository } from './oauth.repository.js';

// MCP sign-in: each project's MCP URL is an OAuth 2.1 protected resource, and the service its authorization
// server (or it trusts OAUTH_ISSUER's tokens instead).
@Module({
  imports: [TenantsModule, ProjectAccessModule],
  controllers: [OAuthWellKnownController, OAuthController, OAuthRequestsController],
  providers: [OAuthRepository, ClientMetadataDocuments, OAuthAuthorizationService, OAuthTokensService],
})
export class OAuthModule {}
