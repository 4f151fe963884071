import { Controller, Get, HttpCode } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PrismaService } from '../database/prisma.service.js';
import { databaseUnavailable } from './health.errors.js';
import { CommandSandbox } from '../sandbox/command-sandbox.js';

class HealthResponseDto {
  status!: 'ok';
}

class CommandSandboxHealthDto {
  @ApiProperty({ enum: ['bwrap', 'none'], description: 'bwrap: every command in a bubblewrap sandbox; none: unsandboxed (operator setting)' })
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

class ReadinessResponseDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
  @ApiProperty({ type: CommandSandboxHealthDto })
  commandSandbox!: CommandSandboxHealthDto;
}

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly prisma: PrismaService,
    private readonly sandbox: CommandSandbox,
  ) {}

  @Get('live')
  @HttpCode(200)
  @ApiOkResponse({ description: 'The process is up and its event loop answers', schema: { example: { status: 'ok' } } })
  live(): HealthResponseDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOkResponse({
    type: ReadinessResponseDto,
    description: 'The database answers. A command sandbox that cannot run does not make the service unready (only commands are refused); it is reported here.',
  })
  @ApiServiceUnavailableResponse({ type: ErrorResponseDto, description: 'database_unavailable' })
  async ready(): Promise<ReadinessResponseDto> {
    if (!(await this.prisma.isReady())) {
      throw databaseUnavailable();
    }
    const state = this.sandbox.state();
    const commandSandbox =
      state.mode === 'none'
        ? { mode: state.mode, ready: true }
        : state.ready
          ? { mode: state.mode, ready: true, version: state.version }
          : { mode: state.mode, ready: false, ...state.problem };
    return { status: 'ok', commandSandbox };
  }
}
