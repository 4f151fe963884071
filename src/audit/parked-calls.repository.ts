import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import { SecretBox } from '../common/secrets/secret-box.js';
import { Prisma, type ParkedCall } from '../generated/prisma/client.js';

export type ParkedCallStatus = 'pending' | 'approved' | 'done' | 'denied' | 'expired';

export interface NewParkedCall {
  id: string;
  tenantId: string;
  projectId: string;
  tool: string;
  channel: string;
  arguments: Record<string, unknown>;
  timeoutMs: number;
  startedAt: Date;
  expiresAt: Date;
  requestedByKeyId: string;
}

// The key under which a parked call's arguments rest sealed.
const SEALED = '$sealed';

// Calls waiting for a person's decision, and the outcome once decided. Every read and write is scoped by
// tenant and project; a decision is one conditional UPDATE, so two deciders cannot both win.
@Injectable()
export class ParkedCallsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
  ) {}

  // The arguments rest sealed (SECRETS_KEY) while the call waits: they are what will run, secrets included.
  async create(call: NewParkedCall): Promise<void> {
    const sealed = { [SEALED]: this.box.seal(JSON.stringify(call.arguments)) };
    await this.prisma.parkedCall.create({ data: { ...call, arguments: sealed, status: 'pending' } });
  }

  // With its arguments opened again (rows parked before sealing hold them plain).
  async findById(tenantId: string, projectId: string, id: string): Promise<ParkedCall | null> {
    if (!isUuid(projectId) || !isUuid(id)) return null;
    return this.opened(await this.prisma.parkedCall.findFirst({ where: { id, tenantId, projectId } }));
  }

  private opened(call: ParkedCall | null): ParkedCall | null {
    const args = call?.arguments as Record<string, unknown> | null | undefined;
    if (!call || !args || typeof args[SEALED] !== 'string') return call;
    return { ...call, arguments: JSON.parse(this.box.open(args[SEALED])) as Prisma.JsonValue };
  }

  // Moves a pending, unexpired call to `status`; null when it was not pending (decided, expired, or absent).
  async decide(
    tenantId: string,
    projectId: string,
    id: string,
    status: 'approved' | 'denied',
    reason: string | null,
    decider: { keyId: string; name: string },
  ): Promise<ParkedCall | null> {
    if (!isUuid(projectId) || !isUuid(id)) return null;
    const { count } = await this.prisma.parkedCall.updateMany({
      where: { id, tenantId, projectId, status: 'pending', expiresAt: { gt: new Date() } },
      data: { status, reason, decidedAt: new Date(), decidedByKeyId: decider.keyId, decidedByName: decider.name, ...(status === 'denied' ? { arguments: Prisma.DbNull } : {}) },
    });
    return count > 0 ? this.findById(tenantId, projectId, id) : null;
  }

  async finish(id: string, outcome: unknown): Promise<void> {
    await this.prisma.parkedCall.update({ where: { id }, data: { status: 'done', outcome: outcome as Prisma.InputJsonValue, arguments: Prisma.DbNull } });
  }

  // The answer of a denied or expired call; its status stays.
  async setOutcome(id: string, outcome: unknown): Promise<void> {
    await this.prisma.parkedCall.update({ where: { id }, data: { outcome: outcome as Prisma.InputJsonValue } });
  }

  // Pending calls past their expiry, marked expired (arguments dropped) and returned: at most `limit` a time.
  async expireDue(limit: number): Promise<ParkedCall[]> {
    const due = await this.prisma.parkedCall.findMany({ where: { status: 'pending', expiresAt: { lte: new Date() } }, take: limit });
    const expired: ParkedCall[] = [];
    for (const call of due) {
      // Conditional: a decision taken meanwhile wins over the expiry.
      const { count } = await this.prisma.parkedCall.updateMany({
        where: { id: call.id, status: 'pending' },
        data: { status: 'expired', decidedAt: new Date(), arguments: Prisma.DbNull },
      });
      if (count > 0) expired.push(call);
    }
    return expired;
  }
}
