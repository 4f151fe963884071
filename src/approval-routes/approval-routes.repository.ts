import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import type { ApprovalDelivery, ApprovalRoute } from '../generated/prisma/client.js';
import type { ApprovalEvent, RouteKind } from './approval-events.js';

export interface NewApprovalRoute {
  id: string;
  tenantId: string;
  projectId: string;
  kind: RouteKind;
  url: string;
  // Sealed already; null for Slack.
  secret: string | null;
  createdByKeyId: string;
  createdByName: string;
}

// A delivery claimed for sending, with what its route says of where and how.
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  // The event's JSON text.
  payload: string;
  kind: RouteKind;
  url: string;
  secret: string | null;
}

// Approval routes and their deliveries. Routes are read and changed by tenant and project; deliveries are
// claimed by whichever instance gets them first (FOR UPDATE SKIP LOCKED) and held under a lease while sent.
@Injectable()
export class ApprovalRoutesRepository {
  constructor(private readonly prisma: PrismaService) {}

  // Creates the route unless the project has `max` already (null). The project's row is locked first, so
  // creations racing on any instance count one after another and never pass the cap together.
  async createWithin(route: NewApprovalRoute, max: number): Promise<ApprovalRoute | null> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM projects WHERE id = ${route.projectId}::uuid AND tenant_id = ${route.tenantId}::uuid FOR UPDATE`;
      if ((await tx.approvalRoute.count({ where: { tenantId: route.tenantId, projectId: route.projectId } })) >= max) return null;
      return tx.approvalRoute.create({ data: route });
    });
  }

  listForProject(tenantId: string, projectId: string): Promise<ApprovalRoute[]> {
    return this.prisma.approvalRoute.findMany({ where: { tenantId, projectId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  findById(tenantId: string, projectId: string, routeId: string): Promise<ApprovalRoute | null> {
    if (!isUuid(routeId)) return Promise.resolve(null);
    return this.prisma.approvalRoute.findFirst({ where: { id: routeId, tenantId, projectId } });
  }

  // Its deliveries go with it (a pending one is not sent).
  async delete(tenantId: string, projectId: string, routeId: string): Promise<boolean> {
    if (!isUuid(routeId)) return false;
    const { count } = await this.prisma.approvalRoute.deleteMany({ where: { id: routeId, tenantId, projectId } });
    return count > 0;
  }

  // One pending delivery of `event` per route of the project, in one statement; answers how many.
  async enqueue(tenantId: string, projectId: string, invocationId: string, event: ApprovalEvent, newId: () => string): Promise<number> {
    const routes = await this.prisma.approvalRoute.findMany({ where: { tenantId, projectId }, select: { id: true } });
    if (routes.length === 0) return 0;
    const payload = JSON.stringify(event);
    const { count } = await this.prisma.approvalDelivery.createMany({
      data: routes.map((route) => ({ id: newId(), tenantId, projectId, routeId: route.id, eventType: event.type, invocationId, payload })),
    });
    return count;
  }

  // Due pending deliveries, at most `limit`, each counted as one more attempt and leased for `leaseMs`: an
  // instance skips rows another is claiming, and a leased row is not claimed again until its lease runs out
  // (its instance stopped mid-send), so no two instances send one delivery at once.
  claimDue(limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return this.prisma.$queryRaw<ClaimedDelivery[]>`WITH due AS (
        SELECT id FROM approval_deliveries
        WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until <= now())
        ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      UPDATE approval_deliveries d SET lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = d.attempts + 1
      FROM due, approval_routes r
      WHERE d.id = due.id AND r.id = d.route_id
      RETURNING d.id::text AS id, d.attempts, d.payload, r.kind, r.url, r.secret`;
  }

  // The outcome of one attempt, written only while this attempt's claim holds.
  async finishAttempt(
    id: string,
    attempt: number,
    outcome: { status: 'pending' | 'delivered' | 'failed'; nextAttemptAt?: Date; statusCode: number | null; error: string | null },
  ): Promise<void> {
    const finished = outcome.status !== 'pending';
    await this.prisma.approvalDelivery.updateMany({
      where: { id, attempts: attempt, status: 'pending' },
      data: {
        status: outcome.status,
        leaseUntil: null,
        lastStatusCode: outcome.statusCode,
        lastError: outcome.error,
        ...(outcome.nextAttemptAt ? { nextAttemptAt: outcome.nextAttemptAt } : {}),
        ...(finished ? { finishedAt: new Date() } : {}),
      },
    });
  }

  listDeliveries(tenantId: string, projectId: string, routeId: string, limit: number, status?: string): Promise<ApprovalDelivery[]> {
    return this.prisma.approvalDelivery.findMany({
      where: { tenantId, projectId, routeId, ...(status ? { status } : {}) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
  }

  // Finished rows past the retention, and past the newest `keptPerRoute` of their route: a project that parks
  // many calls keeps a bounded history. Pending rows stay until they are sent or fail.
  async prune(retentionMs: number, keptPerRoute: number): Promise<number> {
    let removed = 0;
    if (retentionMs > 0) {
      removed += await this.prisma.$executeRaw`DELETE FROM approval_deliveries
        WHERE status <> 'pending' AND finished_at < now() - make_interval(secs => ${retentionMs / 1000})`;
    }
    removed += await this.prisma.$executeRaw`DELETE FROM approval_deliveries WHERE id IN (
        SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY route_id ORDER BY created_at DESC, id DESC) AS n
          FROM approval_deliveries WHERE status <> 'pending') ranked
        WHERE n > ${keptPerRoute})`;
    return removed;
  }

  // The OAuth client an access token was issued to (its client_id); null for an API key.
  async oauthClientIdOf(keyId: string): Promise<string | null> {
    if (!isUuid(keyId)) return null;
    const key = await this.prisma.apiKey.findUnique({ where: { id: keyId }, select: { oauthGrant: { select: { clientId: true } } } });
    return key?.oauthGrant?.clientId ?? null;
  }
}
