import { Global, Module } from '@nestjs/common';
import { EXTERNAL_TOKENS } from '../common/auth/oauth-resource.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ExternalTokenVerifier } from './external-tokens.js';
import { ProjectAccessModule } from '../projects/project-access.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TenantsModule } from '../tenants/tenants.module.js';
import { ClientMetadataDocuments } from './client-metadata.js';
import { OAuthAuthorizationService } from './oauth-authorization.service.js';
import { OAuthRequestsController } from './oauth-requests.controller.js';
import { OAuthTokensService } from './oauth-tokens.service.js';
import { OAuthWellKnownController } from './oauth-well-known.controller.js';
import { OAuthController } from './oauth.controller.js';
import { OAuthRepository } from './oauth.repository.js';
import { OAuthSweep } from './oauth.sweep.js';

// MCP sign-in: each project's MCP URL is an OAuth 2.1 protected resource, and the service its authorization
// server (or it trusts OAUTH_ISSUER's tokens instead). Global for the one thing the global AuthGuard asks
// of it: EXTERNAL_TOKENS (null unless OAUTH_ISSUER is set).
@Global()
@Module({
  imports: [TenantsModule, ProjectAccessModule, RateLimitModule],
  controllers: [OAuthWellKnownController, OAuthController, OAuthRequestsController],
  providers: [
    OAuthRepository,
    ClientMetadataDocuments,
    OAuthAuthorizationService,
    OAuthTokensService,
    OAuthSweep,
    ExternalTokenVerifier,
    {
      provide: EXTERNAL_TOKENS,
      inject: [APP_CONFIG, ExternalTokenVerifier],
      useFactory: (config: AppConfig, verifier: ExternalTokenVerifier) => (config.oauth.issuer === null ? null : verifier),
    },
  ],
  exports: [EXTERNAL_TOKENS],
})
export class OAuthModule {}
