import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { deleteInBatches } from '../common/database/delete-in-batches.js';
import { ConnectionsRepository } from './connections.repository.js';

// A revoked, expired or failed connection holds no token, and no call uses it again; it is kept this long
// after it ended (its last change) so the tenant can still see in the listing what became of a person's
// connection, then deleted: otherwise every new flow for the same person would leave a row forever.
export const ENDED_RETENTION_DAYS = 7;
const ENDED_RETENTION_MS = ENDED_RETENTION_DAYS * 24 * 60 * 60_000;
// A pending connection whose link (and verification flow, if it had one) ran out this long ago: it lists as
// expired until then, far past any exchange that began just before the link's end.
export const DEAD_LINK_RETENTION_MS = 60 * 60_000;
const SWEEP_EVERY_MS = 10 * 60_000;

// Deletes the connections of every tenant that are no longer usable nor useful; an active one never.
@Injectable()
export class ConnectionsSweeper implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Connections');
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly connections: ConnectionsRepository) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  // How many rows went. A failure is logged, and the next sweep takes up where this one stopped.
  async sweep(): Promise<number> {
    const now = Date.now();
    const endedBefore = new Date(now - ENDED_RETENTION_MS);
    const linkBefore = new Date(now - DEAD_LINK_RETENTION_MS);
    return deleteInBatches(this.logger, 'ended connections', (limit) => this.connections.deleteSpent(endedBefore, linkBefore, limit));
  }
}
