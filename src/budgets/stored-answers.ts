import { Injectable } from '@nestjs/common';
import { describeBytes } from '../common/format/describe-bytes.js';
import { LoopShare, storedCost } from '../common/scheduling/loop-share.js';
import type { Prisma } from '../generated/prisma/client.js';
import { BudgetsRepository } from './budgets.repository.js';
import { TenantBudgets } from './tenant-budgets.js';

type Tx = Prisma.TransactionClient;

// Where the tenant's storedAnswerBytes stands when an answer is about to be kept.
export interface AnswerRoom {
  // Whether the answer fits: the stored answers, less what the same write frees, plus the answer, within the budget.
  fits: boolean;
  budget: number;
  stored: number;
}

// The one way an answer is kept after its request has been answered: an Idempotency-Key's stored answer, an
// approved call's outcome, an MCP task's result. Each is measured against the tenant's storedAnswerBytes and
// written under the tenant's row lock, so no two writers on any instance both take the last room. The writer
// is told whether it fits; one that does not keeps a stand-in saying so (notKeptMessage), and its request is
// still answered in full: the call ran once, and never runs again for want of room.
@Injectable()
export class StoredAnswers {
  constructor(
    private readonly store: BudgetsRepository,
    private readonly budgets: TenantBudgets,
    private readonly share: LoopShare,
  ) {}

  // `bytes`: the answer as it would be kept. `freed`: what the same write drops (read under the lock), such as
  // a parked call's arguments, which its outcome replaces. False when there is no such tenant.
  async keep<T>(
    tenantId: string,
    bytes: number,
    write: (tx: Tx, room: AnswerRoom) => Promise<T>,
    freed?: (tx: Tx) => Promise<number>,
  ): Promise<T | false> {
    // Written to the database for the tenant: its share of the event loop pays for it (LoopShare).
    this.share.charge(tenantId, storedCost(bytes));
    return this.store.withTenantLocked(tenantId, async (tx, overrides) => {
      const budget = this.budgets.merge(overrides).storedAnswerBytes;
      const stored = await this.store.storedAnswerBytes(tx, tenantId);
      const dropped = freed ? await freed(tx) : 0;
      return write(tx, { fits: stored - dropped + bytes <= budget, budget, stored });
    });
  }

  // Where the budget stands when the tenant's stored answers already fill it (read without the lock), else
  // null: a call whose answer must be kept (an MCP task's) is then refused before it runs, as a keyed call is,
  // so the stand-ins of answers that did not fit cannot pile up past the budget either.
  async full(tenantId: string): Promise<AnswerRoom | null> {
    const figures = await this.budgets.figures(tenantId);
    if (!figures) return null;
    const stored = await this.store.storedAnswerBytes(this.store.client, tenantId);
    return stored >= figures.storedAnswerBytes ? { fits: false, budget: figures.storedAnswerBytes, stored } : null;
  }
}

// What is kept in place of an answer that did not fit, for whoever reads it later (a replay, the requester of
// an approved call, a tasks/result).
export function notKeptMessage(ran: { status: string; invocationId: string }, bytes: number, room: AnswerRoom): string {
  return `This call ran once and answered ${ran.status} (invocation ${ran.invocationId}); its answer of ${describeBytes(bytes)} was not kept, because the tenant's stored answers (${describeBytes(room.stored)}) would pass its storedAnswerBytes budget of ${describeBytes(room.budget)}. It is not run again: read its effects, or its audit row.`;
}

// The outcome kept in place of a call's outcome that did not fit (a replay, or the requester of an approved
// call, reads it): an error naming the budget, saying the call ran once.
export function notKeptOutcome(
  outcome: { readonly invocationId?: unknown; readonly tool?: unknown; readonly status?: unknown; readonly durationMs?: unknown },
  bytes: number,
  room: AnswerRoom,
): Record<string, unknown> {
  const ran = { status: String(outcome.status), invocationId: String(outcome.invocationId) };
  return {
    invocationId: outcome.invocationId,
    tool: outcome.tool,
    status: 'error',
    error: { code: 'tenant_budget_exceeded', message: notKeptMessage(ran, bytes, room) },
    durationMs: outcome.durationMs ?? 0,
  };
}
