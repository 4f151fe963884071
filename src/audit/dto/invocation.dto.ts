import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { JSON_VALUE_SCHEMA } from '../../common/http/json-value.schema.js';
import { PageQueryDto } from '../../common/pagination/cursor.js';
import type { Invocation } from '../../generated/prisma/client.js';
import { INVOCATION_CHANNELS, INVOCATION_STATUSES, type InvocationStatus } from '../audit.repository.js';

export class ListInvocationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Only calls of this tool' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  tool?: string;

  @ApiPropertyOptional({ enum: INVOCATION_STATUSES })
  @IsOptional()
  @IsIn(INVOCATION_STATUSES)
  status?: InvocationStatus;

  @ApiPropertyOptional({ format: 'uuid', description: 'Only calls made with this API key (an OAuth access token is one too)' })
  @IsOptional()
  @IsUUID()
  callerKeyId?: string;

  @ApiPropertyOptional({ description: 'Only calls made for this end user (Toolgate-User)' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  user?: string;
}

export class InvocationApprovalDto {
  @ApiProperty({ enum: ['pending', 'approved', 'denied', 'expired'] }) status!: string;
  @ApiProperty({ nullable: true, type: String }) reason!: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) decidedAt!: string | null;
  @ApiProperty({ format: 'date-time' }) expiresAt!: string;
  @ApiProperty({ type: () => InvocationDecidedByDto, nullable: true, description: 'Who decided (null while pending or once expired)' })
  decidedBy!: InvocationDecidedByDto | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'docs',
    description:
      "A call through a toolset that confines the tool to a directory of the workspace: that directory (the model's paths were relative to it); else null",
  })
  pathPrefix!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    description:
      "SHA-256 (hex) of the parked arguments' canonical JSON (object keys sorted at every level); approve may name it (argumentsDigest) to bind the decision to these arguments. Null for calls parked before it was kept",
  })
  argumentsDigest!: string | null;
  @ApiPropertyOptional({
    ...JSON_VALUE_SCHEMA,
    description:
      'While pending, to admin and approver keys only: the arguments exactly as they will run, secrets included; through a toolset, its fixed arguments included and, under a pathPrefix, the paths relative to the workspace (the directory joined in)',
  })
  pendingArguments?: unknown;
}

export class InvocationDecidedByDto {
  @ApiProperty({ format: 'uuid', description: 'The API key that decided' }) keyId!: string;
  @ApiProperty({ nullable: true, type: String, description: "That key's name" }) name!: string | null;
}

export class InvocationCallerDto {
  @ApiProperty({ format: 'uuid', description: 'The API key the call was made with (an OAuth access token is one)' }) keyId!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'Claude (OAuth)',
    description: 'That key\'s name; an OAuth access token is named after its client, "<client> (OAuth)"',
  })
  name!: string | null;
}

export class InvocationPolicyDto {
  @ApiProperty({ enum: ['allow', 'forbid', 'ask'], description: 'What the policies decided before the call ran' }) decision!: string;
  @ApiProperty({ type: [String], example: ['writes-stay-in-docs'], description: 'The @id of each policy that determined it' })
  policyIds!: string[];
}

export class InvocationResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) projectId!: string;
  @ApiProperty({ description: 'The real tool that was called (through a toolset, under exposedTool)' }) tool!: string;
  @ApiProperty({ nullable: true, type: String, description: 'A call through a toolset: its slug; else null' }) toolset!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'A call through a toolset: the name the model called the tool by; else null' })
  exposedTool!: string | null;
  @ApiProperty({
    enum: INVOCATION_CHANNELS,
    description:
      "rest: POST .../invoke; mcp: tools/call on the project's MCP endpoint; browse: a read through the workspace browsing routes",
  })
  channel!: string;
  @ApiProperty({
    type: () => InvocationCallerDto,
    nullable: true,
    description: 'Who made the call: the key it came with (null on rows written before callers were recorded)',
  })
  caller!: InvocationCallerDto | null;
  @ApiProperty({ type: () => InvocationPolicyDto, nullable: true, description: 'The policy decision (null: no policy was in force)' })
  policy!: InvocationPolicyDto | null;
  @ApiProperty({ nullable: true, type: String, description: 'The end user the call was made for (Toolgate-User); null: none named' })
  user!: string | null;
  @ApiProperty({ enum: INVOCATION_STATUSES }) status!: string;
  @ApiProperty({ nullable: true, type: String, example: 'TOOL_ARG_VALIDATION_FAILURE' }) event!: string | null;
  @ApiProperty({ nullable: true, type: String }) errorCode!: string | null;
  @ApiProperty({ nullable: true, type: String }) errorMessage!: string | null;
  @ApiProperty() durationMs!: number;
  @ApiProperty({ ...JSON_VALUE_SCHEMA, description: 'The arguments as received (size-capped); null once a parked call is decided' })
  arguments!: unknown;
  @ApiProperty() argumentsTruncated!: boolean;
  @ApiProperty({
    type: [String],
    example: ['/headers/Authorization'],
    description: 'JSON Pointers of the argument values stored as "[redacted]": credential-like names and writeOnly parameters',
  })
  redactedPaths!: string[];
  @ApiProperty({ format: 'date-time' }) startedAt!: string;
  @ApiProperty({ format: 'date-time' }) finishedAt!: string;
  @ApiProperty({
    type: () => InvocationDecidedByDto,
    nullable: true,
    description: 'A decided parked call: the key that approved or denied it',
  })
  decidedBy!: InvocationDecidedByDto | null;
  @ApiPropertyOptional({ type: () => InvocationApprovalDto, description: 'Only for a call parked for approval' })
  approval?: InvocationApprovalDto;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'A decided parked call: what it answered (an approved call: status, result or error, durationMs)',
  })
  outcome?: Record<string, unknown>;

  static from(row: Invocation): InvocationResponseDto {
    return {
      id: row.id,
      projectId: row.projectId,
      tool: row.tool,
      toolset: row.toolset,
      exposedTool: row.exposedTool,
      channel: row.channel,
      caller: row.callerKeyId === null ? null : { keyId: row.callerKeyId, name: row.callerName },
      policy: row.policyDecision === null ? null : { decision: row.policyDecision, policyIds: (row.policyIds as string[] | null) ?? [] },
      user: row.user,
      status: row.status,
      event: row.event,
      errorCode: row.errorCode,
      errorMessage: row.errorMessage,
      durationMs: row.durationMs,
      arguments: row.arguments,
      argumentsTruncated: row.argumentsTruncated,
      redactedPaths: (row.redactedPaths as string[] | null) ?? [],
      startedAt: row.startedAt.toISOString(),
      finishedAt: row.finishedAt.toISOString(),
      decidedBy: row.decidedByKeyId === null ? null : { keyId: row.decidedByKeyId, name: row.decidedByName },
    };
  }
}

export class InvocationListResponseDto {
  @ApiProperty({ type: [InvocationResponseDto] }) items!: InvocationResponseDto[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}

export class ExportInvocationsQueryDto {
  @ApiPropertyOptional({ format: 'date-time', description: 'Calls started at or after this instant (default: the oldest kept)' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Calls started before this instant (default: no bound)' })
  @IsOptional()
  @IsISO8601({ strict: true })
  until?: string;

  @ApiPropertyOptional({ description: 'The `cursor` of the last line received: resumes the export after it' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}
