import { Controller, Get, HttpCode } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/auth.decorators.js';
import { AppError } from '../common/errors/app-error.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PrismaService } from '../database/prisma.service.js';

class HealthResponseDto {
  status!: 'ok';
}

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly prisma: PrismaService) {}

  @Get('live')
  @HttpCode(200)
  @ApiOkResponse({ description: 'The process is up and its event loop answers', schema: { example: { status: 'ok' } } })
  live(): HealthResponseDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOkResponse({ description: 'The database answers', schema: { example: { status: 'ok' } } })
  @ApiServiceUnavailableResponse({ type: ErrorResponseDto, description: 'database_unavailable' })
  async ready(): Promise<HealthResponseDto> {
    if (!(await this.prisma.isReady())) {
      throw new AppError(503, 'database_unavailable', 'The database does not answer');
    }
    return { status: 'ok' };
  }
}
