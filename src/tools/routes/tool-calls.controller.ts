import { Body, Controller, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../../common/errors/error-response.dto.js';
import { PROJECT_ID, TOOL_NAME } from '../../common/http/api-params.js';
import { ClientAbortController } from '../../common/http/client-abort-controller.decorator.js';
import { InvocationResultDto, InvokeToolBodyDto, PendingApprovalDto } from '../dto/tool.dto.js';
import { principalOf, type RawToolCall, RestToolCall } from '../tool-call.gate.js';
import { BatchBodyDto, BatchResponseDto } from '../dto/batch.dto.js';
import { type ExpressLikeResponse, type FastifyLikeReply, jsonReply } from './json-reply.js';
import { BatchRouteService, batchAnswerPieces } from './batch-route.service.js';
import { InvokeRouteService } from './invoke-route.service.js';
import { refusalAnswer } from '../../common/errors/error-answer.js';

const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  required: false,
  description:
    '1-255 visible ASCII characters. The first answer is stored (IDEMPOTENCY_TTL_HOURS); a repeat of the same call returns it with Idempotent-Replayed: true and the tool does not run again',
};

@ApiTags('tools')
@TenantAuth()
@Controller('v1/projects/:projectId/tools')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found, or tool_not_found with details.suggestions' })
export class ToolCallsController {
  constructor(
    private readonly invoker: InvokeRouteService,
    private readonly batches: BatchRouteService,
  ) {}

  @Post(':toolName/invoke')
  @AllowRoles('agent')
  @ApiOperation({ operationId: 'invokeTool', summary: 'Call a tool with the arguments a model wrote' })
  // RestToolCall reads the path itself, so the parameter is declared here.
  @ApiParam(TOOL_NAME)
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiBody({ type: InvokeToolBodyDto })
  @ApiOkResponse({
    type: InvocationResultDto,
    description: 'The tool ran: status ok, error or timeout',
    headers: {
      'Idempotent-Replayed': {
        description: 'true when this is the stored answer of an earlier request with the same key',
        schema: { type: 'string' },
      },
    },
  })
  @ApiAcceptedResponse({ type: PendingApprovalDto, description: 'The project requires approval of this tool: the call is parked, not run' })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'invalid_body, invalid_path, invalid_timeout, invalid_idempotency_key' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description:
      'Refused before running: path_outside_workspace, url_blocked, command_not_allowed, shell_disabled, special_file, hard_link; forbidden: the admin token was sent',
  })
  @ApiConflictResponse({
    type: ErrorResponseDto,
    description: 'idempotency_in_progress: the first request with this key is still running (Retry-After)',
  })
  @ApiUnprocessableEntityResponse({
    type: ErrorResponseDto,
    description: 'invalid_arguments (error.tool, error.issues, error.usage: written for the model); idempotency_key_reused',
  })
  async invoke(
    @RestToolCall() call: RawToolCall,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @ClientAbortController() controller: AbortController,
    @Res() response: ExpressLikeResponse | FastifyLikeReply,
  ): Promise<void> {
    const answer = await this.invoker.invoke(call, idempotencyKey, controller).catch(refusalAnswer);
    jsonReply(response).send(answer.status, answer.headers, answer.body);
  }

  @Post('batch')
  @AllowRoles('agent')
  @ApiOperation({ operationId: 'invokeToolBatch', summary: 'Call up to 32 tools in one request, each answered on its own' })
  @HttpCode(200)
  @ApiBody({ type: BatchBodyDto })
  @ApiOkResponse({
    type: BatchResponseDto,
    description: 'Every call answered on its own, in the order of the request; 200 even when some failed',
  })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'Nothing ran: invalid_batch, empty_batch, batch_too_large (over 32 calls), duplicate_call_id, invalid_idempotency_key',
  })
  async batch(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Body() body: unknown,
    @ClientAbortController() controller: AbortController,
    @Res() response: ExpressLikeResponse | FastifyLikeReply,
  ): Promise<void> {
    // Each result goes out as the bytes the batch wrote when it measured it, one piece at a time.
    const answer = await this.batches.run(tenant.tenantId, projectId, principalOf(tenant), body, controller);
    jsonReply(response).sendPieces(200, {}, batchAnswerPieces(answer));
  }
}
