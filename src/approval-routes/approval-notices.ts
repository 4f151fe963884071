import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { redactMessage } from '../common/secrets/secret-redaction.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { type ApprovalDecidedData, type ApprovalEvent, approvalUrlOf, type Requester } from './approval-events.js';
import { ApprovalDeliveryWorker } from './approval-delivery.worker.js';
import { ApprovalRoutesRepository } from './approval-routes.repository.js';

export interface ParkedNotice {
  tenantId: string;
  projectId: string;
  invocationId: string;
  tool: string;
  toolset: string | null;
  requestedBy: { keyId: string; keyName: string; user?: string; oauthClient?: string | null };
  argumentsDigest: string;
  expiresAt: Date;
}

export interface DecidedNotice {
  tenantId: string;
  projectId: string;
  invocationId: string;
  tool: string;
  toolset: string | null;
  decision: ApprovalDecidedData['decision'];
  decidedBy: { keyId: string; name: string } | null;
  reason: string | null;
  decidedAt: Date;
  argumentsDigest: string | null;
}

// Queues a parked call's announcements, one durable delivery per approval route of its project; the
// delivery worker sends them. Queuing never fails the call or its decision: a database that refuses the
// rows is logged, and the call waits for a person all the same (the console and the event stream show it).
@Injectable()
export class ApprovalNotices {
  private readonly logger = new Logger('ApprovalRoutes');

  constructor(
    private readonly repository: ApprovalRoutesRepository,
    private readonly worker: ApprovalDeliveryWorker,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async requested(notice: ParkedNotice): Promise<void> {
    await this.queue(notice, async () => {
      const requestedBy: Requester = { keyId: notice.requestedBy.keyId, keyName: notice.requestedBy.keyName };
      if (notice.requestedBy.user !== undefined) requestedBy.user = notice.requestedBy.user;
      if (notice.requestedBy.oauthClient) {
        const clientId = await this.repository.oauthClientIdOf(notice.requestedBy.keyId);
        if (clientId !== null) requestedBy.oauthClientId = clientId;
      }
      return {
        type: 'approval.requested',
        timestamp: new Date().toISOString(),
        data: {
          invocationId: notice.invocationId,
          projectId: notice.projectId,
          tool: notice.tool,
          ...(notice.toolset !== null ? { toolset: notice.toolset } : {}),
          requestedBy,
          argumentsDigest: notice.argumentsDigest,
          expiresAt: notice.expiresAt.toISOString(),
          approvalUrl: approvalUrlOf(this.config.oauth.publicUrl, notice.projectId, notice.invocationId),
        },
      };
    });
  }

  async decided(notice: DecidedNotice): Promise<void> {
    await this.queue(notice, () =>
      Promise.resolve({
        type: 'approval.decided',
        timestamp: new Date().toISOString(),
        data: {
          invocationId: notice.invocationId,
          projectId: notice.projectId,
          tool: notice.tool,
          ...(notice.toolset !== null ? { toolset: notice.toolset } : {}),
          decision: notice.decision,
          decidedBy: notice.decidedBy === null ? null : { keyId: notice.decidedBy.keyId, keyName: notice.decidedBy.name },
          // A person's text: a credential pasted into it is redacted, as in the denial the caller reads.
          reason: notice.reason === null ? null : redactMessage(notice.reason),
          decidedAt: notice.decidedAt.toISOString(),
          argumentsDigest: notice.argumentsDigest,
          approvalUrl: approvalUrlOf(this.config.oauth.publicUrl, notice.projectId, notice.invocationId),
        },
      }),
    );
  }

  private async queue(
    at: { tenantId: string; projectId: string; invocationId: string },
    build: () => Promise<ApprovalEvent>,
  ): Promise<void> {
    try {
      const queued = await this.repository.enqueue(at.tenantId, at.projectId, at.invocationId, await build(), randomUUID);
      if (queued > 0) this.worker.kick();
    } catch (error) {
      this.logger.warn(
        `Queuing the approval routes' deliveries of call ${at.invocationId} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
