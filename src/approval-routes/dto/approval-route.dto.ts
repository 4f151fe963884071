import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import type { ApprovalDelivery, ApprovalRoute } from '../../generated/prisma/client.js';

const KINDS = ['webhook', 'slack'] as const;
const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export class CreateApprovalRouteDto {
  @ApiProperty({
    enum: KINDS,
    description: 'webhook: Standard Webhooks events (signed); slack: a Slack incoming-webhook message (Block Kit)',
  })
  @IsIn(KINDS)
  kind!: (typeof KINDS)[number];

  @ApiProperty({
    example: 'https://hooks.example.com/toolgate',
    description: 'http(s); judged by the fetch_url address rules now and at every send',
  })
  @IsString()
  @MaxLength(2048)
  url!: string;

  @ApiPropertyOptional({
    writeOnly: true,
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description:
      'webhook only: the signing secret, whsec_ and base64 of 24 to 64 bytes. Left out, one is generated and shown once in the answer. Stored sealed, never shown again',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  secret?: string;
}

export class ApprovalRouteResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) projectId!: string;
  @ApiProperty({ enum: KINDS }) kind!: string;
  @ApiProperty({ description: "A Slack route's URL is its credential: only its origin is shown" }) url!: string;
  @ApiProperty({ description: 'Whether the route signs its events (webhook)' }) signed!: boolean;
  @ApiProperty({ nullable: true, type: String }) createdBy!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;

  static from(route: ApprovalRoute): ApprovalRouteResponseDto {
    return {
      id: route.id,
      projectId: route.projectId,
      kind: route.kind,
      url: route.kind === 'slack' ? slackShownUrl(route.url) : route.url,
      signed: route.kind === 'webhook' && route.secret !== null,
      createdBy: route.createdByName,
      createdAt: route.createdAt.toISOString(),
    };
  }
}

export class CreatedApprovalRouteResponseDto extends ApprovalRouteResponseDto {
  @ApiPropertyOptional({ description: 'A webhook route made without a secret: the one generated for it (whsec_…), shown this once only' })
  secret?: string;
}

export class ApprovalRouteListResponseDto {
  @ApiProperty({ type: [ApprovalRouteResponseDto] }) items!: ApprovalRouteResponseDto[];
}

export class ListApprovalDeliveriesQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: (typeof DELIVERY_STATUSES)[number];
}

export class ApprovalDeliveryResponseDto {
  @ApiProperty({ format: 'uuid', description: 'Sent as webhook-id, the same on every retry: a receiver de-duplicates on it' }) id!: string;
  @ApiProperty({ enum: ['approval.requested', 'approval.decided'] }) eventType!: string;
  @ApiProperty({ format: 'uuid' }) invocationId!: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status!: string;
  @ApiProperty({ description: 'Sends made so far' }) attempts!: number;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'When a pending delivery is sent next' }) nextAttemptAt!:
    string | null;
  @ApiProperty({ nullable: true, type: Number }) lastStatusCode!: number | null;
  @ApiProperty({ nullable: true, type: String }) lastError!: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The event as sent (a Slack route sends it as a Block Kit message)',
  })
  payload!: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) finishedAt!: string | null;

  static from(row: ApprovalDelivery): ApprovalDeliveryResponseDto {
    return {
      id: row.id,
      eventType: row.eventType,
      invocationId: row.invocationId,
      status: row.status,
      attempts: row.attempts,
      nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
      lastStatusCode: row.lastStatusCode,
      lastError: row.lastError,
      payload: JSON.parse(row.payload) as Record<string, unknown>,
      createdAt: row.createdAt.toISOString(),
      finishedAt: row.finishedAt?.toISOString() ?? null,
    };
  }
}

export class ApprovalDeliveryListResponseDto {
  @ApiProperty({ type: [ApprovalDeliveryResponseDto], description: 'Newest first' }) items!: ApprovalDeliveryResponseDto[];
}

// What a Slack route shows of its URL, and keeps of it in the clear (the whole URL rests sealed).
export function slackShownUrl(url: string): string {
  return `${new URL(url).origin}/…`;
}
