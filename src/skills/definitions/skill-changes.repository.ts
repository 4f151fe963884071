import { Injectable } from '@nestjs/common';
import { isUuid } from '../../common/validation/is-uuid.js';
import { PrismaService } from '../../database/prisma.service.js';
import { Prisma, type SkillToolChange } from '../../generated/prisma/client.js';
import type { DefinitionDiffEntry, UpstreamDefinition } from './definition-pin.js';
import type { DescriptionFlag } from './description-rules.js';

export type SkillChangeKind = 'added' | 'changed' | 'removed';
export type SkillChangeStatus = 'pending' | 'accepted' | 'rejected' | 'superseded';

export interface NewSkillChange {
  // The tool's name on the upstream server.
  tool: string;
  kind: SkillChangeKind;
  previous: UpstreamDefinition | null;
  proposed: UpstreamDefinition | null;
  proposedHash: string | null;
  diff: DefinitionDiffEntry[];
  flags: DescriptionFlag[];
  incompatible: boolean;
}

export type SkillChangeRecord = Omit<SkillToolChange, 'kind' | 'status' | 'previous' | 'proposed' | 'diff' | 'flags'> & {
  kind: SkillChangeKind;
  status: SkillChangeStatus;
  previous: UpstreamDefinition | null;
  proposed: UpstreamDefinition | null;
  diff: DefinitionDiffEntry[];
  flags: DescriptionFlag[];
};

export interface QueuedChange {
  id: string;
  pending: boolean;
  // When it was decided, or detected while pending.
  at: Date;
  bytes: number;
}

type Tx = Prisma.TransactionClient;
const MAX_LISTED = 200;

// The review queue of skills' tool definitions. Writes that decide or raise a change run inside the
// transaction that holds the skill's lock (SkillsRepository.withLockedSkill), so they take its `tx`.
@Injectable()
export class SkillChangesRepository {
  constructor(private readonly prisma: PrismaService) {}

  // Newest first; `status` null: every status.
  async list(tenantId: string, skillId: string, status: SkillChangeStatus | null): Promise<SkillChangeRecord[]> {
    if (!isUuid(skillId)) return [];
    const rows = await this.prisma.skillToolChange.findMany({
      where: { tenantId, skillId, ...(status ? { status } : {}) },
      orderBy: [{ detectedAt: 'desc' }, { id: 'desc' }],
      take: MAX_LISTED,
    });
    return rows.map(parsed);
  }

  async find(tenantId: string, skillId: string, changeId: string, tx: Tx = this.prisma): Promise<SkillChangeRecord | null> {
    if (!isUuid(skillId) || !isUuid(changeId)) return null;
    const row = await tx.skillToolChange.findFirst({ where: { id: changeId, tenantId, skillId } });
    return row && parsed(row);
  }

  async pending(skillId: string, tx: Tx): Promise<SkillChangeRecord[]> {
    return (await tx.skillToolChange.findMany({ where: { skillId, status: 'pending' } })).map(parsed);
  }

  // Whether an admin already rejected exactly this definition of the tool (an upstream that keeps answering
  // it is not raised again).
  async wasRejected(skillId: string, tool: string, proposedHash: string | null, tx: Tx): Promise<boolean> {
    return (await tx.skillToolChange.count({ where: { skillId, tool, proposedHash, status: 'rejected' } })) > 0;
  }

  async create(tenantId: string, skillId: string, change: NewSkillChange, tx: Tx): Promise<SkillChangeRecord> {
    return parsed(await tx.skillToolChange.create({ data: { tenantId, skillId, status: 'pending', ...json(change) } }));
  }

  // A pending change the upstream changed again: it now proposes this.
  async replace(id: string, change: NewSkillChange, tx: Tx): Promise<SkillChangeRecord> {
    return parsed(await tx.skillToolChange.update({ where: { id }, data: { ...json(change), detectedAt: new Date() } }));
  }

  async decide(
    id: string,
    status: 'accepted' | 'rejected' | 'superseded',
    decidedBy: { keyId: string; name: string } | null,
    tx: Tx,
  ): Promise<SkillChangeRecord> {
    return parsed(
      await tx.skillToolChange.update({
        where: { id },
        data: { status, decidedAt: new Date(), decidedByKeyId: decidedBy?.keyId ?? null, decidedByName: decidedBy?.name ?? null },
      }),
    );
  }

  // Every change of the skill with its size as JSON text (previous, proposed, diff and flags, in UTF-8): what
  // its review queue holds (ReviewQueueRoom), as a listing sends it. Not the size as stored: text the database
  // compresses well (a description of one character repeated) took 24 times the queue's bytes to list. The
  // queue is bounded in these bytes, so reading them costs as much at most.
  async queued(skillId: string, tx: Tx): Promise<QueuedChange[]> {
    const rows = await tx.$queryRaw<Array<{ id: string; status: string; at: Date; bytes: number | bigint }>>`
      SELECT id, status, coalesce(decided_at, detected_at) AS at,
             coalesce(octet_length(previous::text), 0) + coalesce(octet_length(proposed::text), 0)
               + octet_length(diff::text) + octet_length(flags::text) AS bytes
        FROM skill_tool_changes WHERE skill_id = ${skillId}::uuid`;
    return rows.map((row) => ({ id: row.id, pending: row.status === 'pending', at: row.at, bytes: Number(row.bytes) }));
  }

  async deleteDecided(skillId: string, ids: readonly string[], tx: Tx): Promise<void> {
    if (ids.length > 0) await tx.skillToolChange.deleteMany({ where: { skillId, id: { in: [...ids] }, status: { not: 'pending' } } });
  }

  async supersedePending(skillId: string, tx: Tx): Promise<void> {
    await tx.skillToolChange.updateMany({ where: { skillId, status: 'pending' }, data: { status: 'superseded', decidedAt: new Date() } });
  }
}

function json(change: NewSkillChange) {
  const value = (v: unknown) => (v === null ? Prisma.DbNull : (v as Prisma.InputJsonValue));
  return {
    tool: change.tool,
    kind: change.kind,
    previous: value(change.previous),
    proposed: value(change.proposed),
    proposedHash: change.proposedHash,
    diff: change.diff as unknown as Prisma.InputJsonValue,
    flags: change.flags as unknown as Prisma.InputJsonValue,
    incompatible: change.incompatible,
  };
}

function parsed(row: SkillToolChange): SkillChangeRecord {
  return {
    ...row,
    kind: row.kind as SkillChangeKind,
    status: row.status as SkillChangeStatus,
    previous: row.previous as unknown as UpstreamDefinition | null,
    proposed: row.proposed as unknown as UpstreamDefinition | null,
    diff: row.diff as unknown as DefinitionDiffEntry[],
    flags: row.flags as unknown as DescriptionFlag[],
  };
}
