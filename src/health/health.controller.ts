import { Controller, Get, HttpCode, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/auth.decorators.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Authorization, OperatorToken } from './operator-token.js';
import { ChangeBus } from '../common/bus/change-bus.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PrismaService } from '../database/prisma.service.js';
import { databaseUnavailable, rateLimitStoreDown } from './health.errors.js';
import { TenantRateLimiter } from '../rate-limit/tenant-rate-limiter.js';
import { CommandSandbox } from '../sandbox/command-sandbox.js';
import { AuditWriter } from '../audit/audit-writer.js';

class HealthResponseDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}

class CommandSandboxHealthDto {
  @ApiProperty({
    enum: ['bwrap', 'none'],
    description: 'bwrap: every command in a bubblewrap sandbox; none: unsandboxed (operator setting)',
  })
  mode!: 'bwrap' | 'none';
  @ApiProperty({ description: 'false: commands are refused with 503 sandbox_unavailable; everything else works' })
  ready!: boolean;
  @ApiProperty({ required: false, description: 'The bubblewrap version the start-up probe ran' })
  version?: string;
  @ApiProperty({ required: false, description: 'Why commands are refused' })
  reason?: string;
  @ApiProperty({ required: false, description: 'What the operator does about it' })
  fix?: string;
}

class AuditQueueHealthDto {
  @ApiProperty({ description: 'Invocation rows waiting to be written to the audit log' })
  pending!: number;
  @ApiProperty({ description: 'AUDIT_MAX_QUEUE: at this many waiting rows, tool calls wait for room' })
  capacity!: number;
}

class ChangeBusHealthDto {
  @ApiProperty({
    enum: ['postgres', 'in-process'],
    description: 'postgres: LISTEN/NOTIFY between instances; in-process: one process (PGlite)',
  })
  mode!: 'postgres' | 'in-process';
  @ApiProperty({
    description: "false: other instances' changes reach the caches only when their entries expire (TTL); the service stays ready",
  })
  connected!: boolean;
  @ApiProperty({ description: "This instance's id on the bus (also in the event ids of the SSE stream)" })
  instanceId!: string;
  @ApiProperty({ required: false, description: 'When the connection was last made or lost' })
  since?: string;
  @ApiProperty({ required: false, description: 'Connection attempts after a loss, since start' })
  reconnects?: number;
  @ApiProperty({ required: false })
  lastError?: string;
  @ApiProperty({ required: false, description: 'Messages waiting for the connection to come back' })
  pending?: number;
  @ApiProperty({ required: false, description: 'Messages dropped because too many waited' })
  dropped?: number;
  @ApiProperty({ required: false, description: 'What the caches do in this state' })
  caches?: string;
}

const OPERATOR_ONLY = 'Only for the operator (Authorization: Bearer <ADMIN_TOKEN>); a public answer has its status only';

class RateLimitStoreHealthDto {
  @ApiProperty({ enum: ['memory', 'redis'] }) mode!: 'memory' | 'redis';
  @ApiProperty({
    description:
      'false: the store does not answer; requests are refused with 503 (or pass uncounted under RATE_LIMIT_ON_STORE_ERROR=allow)',
  })
  ready!: boolean;
}

class ReadinessResponseDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
  @ApiProperty({ type: CommandSandboxHealthDto, required: false, description: OPERATOR_ONLY })
  commandSandbox?: CommandSandboxHealthDto;
  @ApiProperty({ type: AuditQueueHealthDto, required: false, description: OPERATOR_ONLY })
  auditQueue?: AuditQueueHealthDto;
  @ApiProperty({ type: ChangeBusHealthDto, required: false, description: OPERATOR_ONLY })
  changeBus?: ChangeBusHealthDto;
  @ApiProperty({ type: RateLimitStoreHealthDto, required: false, description: OPERATOR_ONLY })
  rateLimitStore?: RateLimitStoreHealthDto;
}

// Public, for load balancers and orchestrators: they get the status and nothing else. What would help an
// attacker map the deployment (versions, instance ids, queue depths, the bus's last error, which can name the
// database host) is for the operator's token, and for /metrics.
@ApiTags('health')
@Public('For load balancers and orchestrators, which hold no key; the details are for the operator token')
@Controller('health')
export class HealthController {
  private readonly operator: OperatorToken;

  constructor(
    private readonly prisma: PrismaService,
    private readonly sandbox: CommandSandbox,
    private readonly audit: AuditWriter,
    private readonly bus: ChangeBus,
    private readonly limiter: TenantRateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.operator = new OperatorToken(config.adminToken);
  }

  @Get('live')
  @ApiOperation({ operationId: 'getLiveness', summary: 'Liveness: the process answers' })
  @HttpCode(200)
  @ApiOkResponse({ type: HealthResponseDto, description: 'The process is up and its event loop answers' })
  live(): HealthResponseDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness: the database answers; for the operator, the command sandbox, audit queue and change bus',
    description:
      'Public: the answer is the status only. With `Authorization: Bearer <ADMIN_TOKEN>` it adds the details (commandSandbox, auditQueue, changeBus); any other credentials are ignored.',
  })
  @ApiOkResponse({
    type: ReadinessResponseDto,
    description:
      'The database answers. A command sandbox that cannot run does not make the service unready (only commands are refused), nor does a lost change bus connection (caches fall back to their TTL); the operator sees both here.',
  })
  @ApiServiceUnavailableResponse({
    type: ErrorResponseDto,
    description: 'database_unavailable, rate_limit_store_unavailable (Retry-After)',
  })
  async ready(@Authorization() authorization: string | undefined): Promise<ReadinessResponseDto> {
    if (!(await this.prisma.isReady())) {
      throw databaseUnavailable();
    }
    // A rate-limit store that does not answer makes every tenant request a 503: not ready, unless the
    // operator chose to let requests through uncounted.
    const storeReady = await this.limiter.storeHealthy();
    if (!storeReady && this.config.rateLimit.onStoreError === 'deny') throw rateLimitStoreDown();
    if (!this.operator.matches(authorization)) return { status: 'ok' };
    const rateLimitStore = { mode: this.config.rateLimit.redisUrl ? ('redis' as const) : ('memory' as const), ready: storeReady };
    const state = this.sandbox.state();
    const commandSandbox =
      state.mode === 'none'
        ? { mode: state.mode, ready: true }
        : state.ready
          ? { mode: state.mode, ready: true, version: state.version }
          : { mode: state.mode, ready: false, ...state.problem };
    return {
      status: 'ok',
      commandSandbox,
      auditQueue: { pending: this.audit.pending, capacity: this.audit.capacity },
      changeBus: this.bus.status(),
      rateLimitStore,
    };
  }
}
