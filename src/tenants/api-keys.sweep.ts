import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { deleteInBatches } from '../common/database/delete-in-batches.js';
import { ApiKeysRepository } from './api-keys.repository.js';

// A revoked or expired key (an OAuth access token included) is kept this long after it ended, so an
// operator can still find the key behind an audit row's callerKeyId for a while; the audit rows themselves
// keep the caller's id and name as text and read the same once the key is gone.
export const ENDED_KEY_RETENTION_MS = 30 * 86_400_000;
const SWEEP_EVERY_MS = 60 * 60_000;

// Deletes the keys that can never authenticate again once their retention is over, with the MCP state kept
// for them. Every instance sweeps; a row deleted by one is skipped by the others.
@Injectable()
export class ApiKeysSweep implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ApiKeys');
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly keys: ApiKeysRepository) {}

  onModuleInit(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  // Answers how many keys went.
  async sweep(): Promise<number> {
    const endedBefore = new Date(Date.now() - ENDED_KEY_RETENTION_MS);
    return deleteInBatches(this.logger, 'ended API keys', (limit) => this.keys.deleteEndedBefore(endedBefore, limit));
  }
}
