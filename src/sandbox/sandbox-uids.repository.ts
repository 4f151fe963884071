import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid.js';
import { orUniqueTaken } from '../database/unique-violation.js';
import { PrismaService } from '../database/prisma.service.js';

export interface UidRange {
  first: number;
  last: number;
}

// The tenants' sandbox uids (tenants.sandbox_uid, unique).
@Injectable()
export class SandboxUidsRepository {
  constructor(private readonly prisma: PrismaService) {}

  // Undefined: no such tenant; null: none taken yet.
  async uidOf(tenantId: string): Promise<number | null | undefined> {
    if (!isUuid(tenantId)) return undefined;
    const row = await this.prisma.tenant.findUnique({ where: { id: tenantId }, select: { sandboxUid: true } });
    return row ? row.sandboxUid : undefined;
  }

  // The next uid of the range after the highest one taken; once the range's end is reached, the lowest
  // one no tenant holds (a deleted tenant's). Null: every uid of the range is taken.
  async freeUid(range: UidRange): Promise<number | null> {
    const { _max } = await this.prisma.tenant.aggregate({
      _max: { sandboxUid: true },
      where: { sandboxUid: { gte: range.first, lte: range.last } },
    });
    const next = _max.sandboxUid === null ? range.first : _max.sandboxUid + 1;
    if (next <= range.last) return next;
    const [gap] = await this.prisma.$queryRaw<Array<{ uid: number }>>`
      SELECT s::int AS uid FROM generate_series(${range.first}::int, ${range.last}::int) AS s
      WHERE NOT EXISTS (SELECT 1 FROM tenants WHERE sandbox_uid = s) ORDER BY s LIMIT 1`;
    return gap ? Number(gap.uid) : null;
  }

  // Gives the tenant `uid` unless it already holds one inside the range; nothing when another tenant took
  // the uid meanwhile (on this instance or another): the caller reads what the tenant holds either way.
  async claim(tenantId: string, uid: number, range: UidRange): Promise<void> {
    const write = this.prisma.tenant.updateMany({
      where: { id: tenantId, OR: [{ sandboxUid: null }, { sandboxUid: { lt: range.first } }, { sandboxUid: { gt: range.last } }] },
      data: { sandboxUid: uid },
    });
    await orUniqueTaken(write);
  }
}
