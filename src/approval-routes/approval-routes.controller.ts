import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PROJECT_ID } from '../common/http/api-params.js';
import { ApprovalRoutesService } from './approval-routes.service.js';
import {
  ApprovalDeliveryListResponseDto,
  ApprovalRouteListResponseDto,
  CreateApprovalRouteDto,
  CreatedApprovalRouteResponseDto,
  ListApprovalDeliveriesQueryDto,
} from './dto/approval-route.dto.js';

const ROUTE_ID = { name: 'routeId', format: 'uuid', description: 'The approval route' } as const;
const NOT_FOUND = "project_not_found, approval_route_not_found (also another tenant's)";

// Admin keys only (no @AllowRoles): a route says where every parked call of the project is announced.
@ApiTags('approvals')
@TenantAuth()
@Controller('v1/projects/:projectId/approval-routes')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
export class ApprovalRoutesController {
  constructor(private readonly routes: ApprovalRoutesService) {}

  @Post()
  @ApiOperation({
    operationId: 'createApprovalRoute',
    summary: "Announce the project's parked calls to a webhook (Standard Webhooks, signed) or a Slack incoming webhook",
  })
  @ApiCreatedResponse({ type: CreatedApprovalRouteResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  @ApiConflictResponse({
    type: ErrorResponseDto,
    description: 'approval_route_limit: the project has APPROVAL_ROUTES_PER_PROJECT routes already',
  })
  @ApiUnprocessableEntityResponse({
    type: ErrorResponseDto,
    description:
      'approval_route_url_refused: not http(s), or an address the fetch_url rules refuse (loopback, private, metadata) unless FETCH_ALLOW_HOSTS opens it; approval_route_secret_refused',
  })
  create(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Body() dto: CreateApprovalRouteDto,
  ): Promise<CreatedApprovalRouteResponseDto> {
    return this.routes.create(tenant, projectId, dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listApprovalRoutes', summary: "The project's approval routes (secrets are never shown)" })
  @ApiOkResponse({ type: ApprovalRouteListResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  list(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<ApprovalRouteListResponseDto> {
    return this.routes.list(tenant, projectId);
  }

  @Delete(':routeId')
  @HttpCode(204)
  @ApiParam(ROUTE_ID)
  @ApiOperation({ operationId: 'deleteApprovalRoute', summary: 'Delete an approval route and its deliveries (a pending one is not sent)' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: NOT_FOUND })
  async delete(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string, @Param('routeId') routeId: string): Promise<void> {
    await this.routes.delete(tenant, projectId, routeId);
  }

  @Get(':routeId/deliveries')
  @ApiParam(ROUTE_ID)
  @ApiOperation({
    operationId: 'listApprovalDeliveries',
    summary: "A route's deliveries, newest first, with their status, attempts and last answer",
  })
  @ApiOkResponse({ type: ApprovalDeliveryListResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: NOT_FOUND })
  deliveries(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('routeId') routeId: string,
    @Query() query: ListApprovalDeliveriesQueryDto,
  ): Promise<ApprovalDeliveryListResponseDto> {
    return this.routes.deliveries(tenant, projectId, routeId, query);
  }
}
