import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';
import type { McpTask, ParkedCall, Prisma } from '../generated/prisma/client.js';
import type { KeyInProject } from './mcp-key-scope.js';

// Who may see a task: the key that made the call, in the project it was made in (another key, project or
// tenant finds nothing, as for an unknown id).
export type TaskOwner = KeyInProject;

export type TaskRowStatus = 'parked' | 'done' | 'cancelled';

export interface NewTask {
  id: string;
  invocationId: string | null;
  status: TaskRowStatus;
  shape: Prisma.InputJsonObject;
  result: Prisma.InputJsonObject | null;
  // The result's size as JSON text (counted in the tenant's storedAnswerBytes).
  resultBytes?: number;
  expiresAt: Date;
}

// A task with the parked call behind it, if any (its status and outcome are the task's state).
export type TaskWithCall = McpTask & { call: ParkedCall | null };

@Injectable()
export class McpTasksRepository {
  constructor(private readonly prisma: PrismaService) {}

  // `tx`: within a transaction that holds the tenant's row lock (a result kept within storedAnswerBytes).
  async create(owner: TaskOwner, task: NewTask, tx: Prisma.TransactionClient | PrismaService = this.prisma): Promise<McpTask> {
    const now = new Date();
    const { result, ...rest } = task;
    return tx.mcpTask.create({ data: { ...owner, ...rest, ...(result ? { result } : {}), createdAt: now, updatedAt: now } });
  }

  // The task of a parked call, when the same key asked for it before (a tools/call replayed by its
  // Idempotency-Key): one call, one task.
  async findByInvocation(owner: TaskOwner, invocationId: string): Promise<McpTask | null> {
    return this.prisma.mcpTask.findFirst({ where: { ...owner, invocationId, expiresAt: { gt: new Date() } } });
  }

  async find(owner: TaskOwner, id: string): Promise<TaskWithCall | null> {
    const task = await this.prisma.mcpTask.findFirst({ where: { ...owner, id, expiresAt: { gt: new Date() } } });
    return task && this.withCall(task);
  }

  // Newest first, `limit` a page; `before` is the (createdAt, id) of the last task of the previous page.
  async list(owner: TaskOwner, limit: number, before: { createdAt: Date; id: string } | null): Promise<TaskWithCall[]> {
    const page = await this.prisma.mcpTask.findMany({
      where: {
        ...owner,
        expiresAt: { gt: new Date() },
        ...(before ? { OR: [{ createdAt: { lt: before.createdAt } }, { createdAt: before.createdAt, id: { lt: before.id } }] } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return Promise.all(page.map((task) => this.withCall(task)));
  }

  // Moves a task that is not yet final to cancelled; false when it was final already (or gone).
  async cancel(owner: TaskOwner, id: string): Promise<boolean> {
    const { count } = await this.prisma.mcpTask.updateMany({
      where: { ...owner, id, status: 'parked' },
      data: { status: 'cancelled', updatedAt: new Date() },
    });
    return count > 0;
  }

  // Tasks past their time to live: nobody can read them any more.
  async deleteExpired(): Promise<number> {
    const { count } = await this.prisma.mcpTask.deleteMany({ where: { expiresAt: { lte: new Date() } } });
    return count;
  }

  private async withCall(task: McpTask): Promise<TaskWithCall> {
    if (task.invocationId === null) return { ...task, call: null };
    // The parked call is the task owner's own: same tenant and project (its id came from the call itself).
    const call = await this.prisma.parkedCall.findFirst({
      where: { id: task.invocationId, tenantId: task.tenantId, projectId: task.projectId },
    });
    return { ...task, call };
  }
}
