import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { deleteInBatches } from '../common/database/delete-in-batches.js';
import { OAuthRepository } from './oauth.repository.js';

const DAY_MS = 86_400_000;
// Authorization requests (with the hashes of their codes) and used refresh tokens are kept a day past their
// end: a code or refresh token presented again within it is known as replayed, and revokes its consent.
const SPENT_RETENTION_MS = DAY_MS;
// A registered client nobody consented to is forgotten a day after it registered; one whose consents all
// ended, a week after (a forgotten client registers again).
const UNUSED_CLIENT_MS = DAY_MS;
const ENDED_CLIENT_MS = 7 * DAY_MS;
// An ended consent is kept as long as an ended key (src/tenants/api-keys.sweep.ts), and never before its
// access tokens are gone.
const ENDED_GRANT_RETENTION_MS = 30 * DAY_MS;
const SWEEP_EVERY_MS = 60 * 60_000;

export interface OAuthSweepResult {
  requests: number;
  refreshTokens: number;
  grants: number;
  clients: number;
}

// Deletes what the authorization server keeps once nothing can use it any more. Every instance sweeps; a row
// deleted by one is skipped by the others. Each kind is deleted in batches (deleteInBatches), and one failing does not stop the others.
@Injectable()
export class OAuthSweep implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('OAuth');
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly oauth: OAuthRepository) {}

  onModuleInit(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  async sweep(): Promise<OAuthSweepResult> {
    const now = Date.now();
    const spentBefore = new Date(now - SPENT_RETENTION_MS);
    return {
      requests: await deleteInBatches(this.logger, 'expired authorization requests', (limit) =>
        this.oauth.deleteExpiredRequests(spentBefore, limit),
      ),
      refreshTokens: await deleteInBatches(this.logger, 'spent refresh tokens', (limit) =>
        this.oauth.deleteSpentRefreshTokens(spentBefore, limit),
      ),
      grants: await deleteInBatches(this.logger, 'ended consents', (limit) =>
        this.oauth.deleteEndedGrants(new Date(now - ENDED_GRANT_RETENTION_MS), limit),
      ),
      clients: await deleteInBatches(this.logger, 'stale clients', (limit) =>
        this.oauth.deleteStaleClients(new Date(now - UNUSED_CLIENT_MS), new Date(now - ENDED_CLIENT_MS), limit),
      ),
    };
  }
}
