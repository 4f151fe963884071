import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { NO_STORE_HEADER, NoStore } from '../common/http/no-store.js';
import { OAuthDecisionDto, OAuthDecisionResponseDto, OAuthRequestViewDto } from './dto/oauth.dto.js';
import { OAuthAuthorizationService } from './oauth-authorization.service.js';
import { MAX_LIVE_CONSENTS } from './oauth.repository.js';

const REQUEST_ID = { name: 'requestId', format: 'uuid', description: 'The authorization request, from the consent page URL' };

// The consent page's two calls, with the key of the person signed in to the console: an admin or approver
// of the tenant that owns the project the client asks for.
@ApiTags('oauth')
@TenantAuth()
@AllowRoles('approver')
@Controller('v1/oauth/requests/:requestId')
@ApiParam(REQUEST_ID)
@ApiNotFoundResponse({
  type: ErrorResponseDto,
  description: "oauth_request_not_found (also another tenant's request, or a project the key is not bound to)",
})
@ApiConflictResponse({ type: ErrorResponseDto, description: 'oauth_request_decided: it was decided already' })
@ApiResponse({ status: 410, type: ErrorResponseDto, description: 'oauth_request_expired' })
export class OAuthRequestsController {
  constructor(private readonly authorization: OAuthAuthorizationService) {}

  @Get()
  @ApiOperation({
    operationId: 'getOAuthRequest',
    summary: 'What a client asks for: its name and verified origin, redirect URI, project, scopes',
  })
  @ApiOkResponse({ type: OAuthRequestViewDto })
  view(@CurrentTenant() tenant: Tenant, @Param('requestId') requestId: string): Promise<OAuthRequestViewDto> {
    return this.authorization.view(tenant, requestId);
  }

  @Post('decision')
  @HttpCode(200)
  @NoStore()
  @ApiOperation({
    operationId: 'decideOAuthRequest',
    summary: 'Approve (with the tools the client may use and how long) or deny; answers where to send the browser',
  })
  @ApiOkResponse({
    type: OAuthDecisionResponseDto,
    headers: NO_STORE_HEADER,
    description: 'redirectTo carries the one-time code (approved) or error=access_denied',
  })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: `forbidden, forbidden_for_role (as on every tenant route); too_many_oauth_consents: the tenant has ${MAX_LIVE_CONSENTS} live OAuth consents, the most it may have, and the request stays pending (details: limit)`,
  })
  decide(
    @CurrentTenant() tenant: Tenant,
    @Param('requestId') requestId: string,
    @Body() decision: OAuthDecisionDto,
  ): Promise<OAuthDecisionResponseDto> {
    return this.authorization.decide(tenant, requestId, decision);
  }
}
