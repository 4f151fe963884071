import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { boundedJson, droppedResult, type JsonLimits, RESULT_MAX_DEPTH } from '../common/json/bounded-json.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { PrismaService } from '../database/prisma.service.js';
import { SecretBox } from '../common/secrets/secret-box.js';
import { Prisma, type ParkedCall } from '../generated/prisma/client.js';
import { jsonbSafe } from './jsonb-safe.js';
import { notKeptOutcome, StoredAnswers } from '../budgets/stored-answers.js';

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
  requestedByName: string;
  // That key's role: the approved run is decided by the policies as that key.
  requestedByRole: string;
  // The end user the call is for (Toolgate-User); null: none. The approved run acts as them.
  user: string | null;
  // Through a toolset that confines the tool to a directory of the workspace: that directory.
  pathPrefix: string | null;
  // Through a toolset: its slug and the name the model called the tool by.
  toolset: string | null;
  exposedTool: string | null;
  argumentsDigest: string;
}

// The key under which a parked call's arguments rest sealed.
const SEALED = '$sealed';
// The outcome's write is retried (the database may blip) before the row is left to finishAbandoned.
const FINISH_ATTEMPTS = 4;
const FINISH_RETRY_MS = 250;
// An outcome wraps its result in one object with a few small fields.
const OUTCOME_SLACK_BYTES = 64 * 1024;

// Calls waiting for a person's decision, and the outcome once decided. Every read and write is scoped by
// tenant and project; a decision is one conditional UPDATE, so two deciders cannot both win.
@Injectable()
export class ParkedCallsRepository {
  private readonly logger = new Logger('Approvals');

  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly storedAnswers: StoredAnswers,
  ) {}

  // The arguments rest sealed (SECRETS_KEY) while the call waits: they are what will run, secrets included.
  // Stored once, here (the audit row keeps its bounded preview). `bytes`: what the row's arguments count
  // against the tenant's storedAnswerBytes (as BudgetsRepository.storedAnswerBytes measures them).
  // The encryption runs off the event loop (SecretBox.sealAsync).
  async seal(args: Record<string, unknown>): Promise<{ sealed: Prisma.InputJsonObject; bytes: number }> {
    const sealed = { [SEALED]: await this.box.sealAsync(JSON.stringify(args)) };
    // Sealed text is base64 of ciphertext, which the database does not compress: stored, it takes its
    // length and a few bytes of jsonb header.
    return { sealed, bytes: Buffer.byteLength(sealed[SEALED]) + 32 };
  }

  async create(call: NewParkedCall, sealed?: Prisma.InputJsonObject, tx: Prisma.TransactionClient = this.prisma): Promise<void> {
    await tx.parkedCall.create({ data: { ...call, arguments: sealed ?? (await this.seal(call.arguments)).sealed, status: 'pending' } });
  }

  // With its arguments opened again (rows parked before sealing hold them plain).
  async findById(tenantId: string, projectId: string, id: string): Promise<ParkedCall | null> {
    if (!isUuid(projectId) || !isUuid(id)) return null;
    return this.opened(await this.prisma.parkedCall.findFirst({ where: { id, tenantId, projectId } }));
  }

  // What a decision needs to know of the key that made a call, in one read: the key whose consent issued it
  // (an OAuth access token's; null otherwise), which is on the caller's side of the call and may not decide it
  // either; and whether its authority still holds. For an API key, whether the key works (not revoked, not
  // expired); for an OAuth access token, whether its consent does: the client's refresh retires the token and
  // its expiry is an hour's, but the consent behind it lasts (revoking the token revokes the consent too). A
  // requester that is no key of this service (an external issuer's token, judged by its issuer) consented to
  // nothing and is not refused here.
  async requester(requestedByKeyId: string): Promise<{ consentedByKeyId: string | null; active: boolean }> {
    if (!isUuid(requestedByKeyId)) return { consentedByKeyId: null, active: true };
    const key = await this.prisma.apiKey.findUnique({
      where: { id: requestedByKeyId },
      select: { revokedAt: true, expiresAt: true, oauthGrant: { select: { decidedByKeyId: true, revokedAt: true, expiresAt: true } } },
    });
    if (key === null) return { consentedByKeyId: null, active: true };
    const holds = (revokedAt: Date | null, expiresAt: Date | null) =>
      revokedAt === null && (expiresAt === null || expiresAt.getTime() > Date.now());
    if (key.oauthGrant)
      return { consentedByKeyId: key.oauthGrant.decidedByKeyId, active: holds(key.oauthGrant.revokedAt, key.oauthGrant.expiresAt) };
    return { consentedByKeyId: null, active: holds(key.revokedAt, key.expiresAt) };
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
      data: {
        status,
        reason,
        decidedAt: new Date(),
        decidedByKeyId: decider.keyId,
        decidedByName: decider.name,
        ...(status === 'denied' ? { arguments: Prisma.DbNull } : {}),
      },
    });
    return count > 0 ? this.findById(tenantId, projectId, id) : null;
  }

  // An approved call's final state, with its outcome, answered as returned here; the row's arguments go. The
  // outcome's JSON is written within the caps on results (one past them, should one get this far, is kept
  // as an error naming the cap) and as jsonb takes it (a lone UTF-16 surrogate or a NUL escape would be
  // refused). It is kept within the tenant's storedAnswerBytes (under its row lock, the arguments it replaces
  // no longer counted): one that does not fit is answered to the approver, and a stand-in saying so is what
  // the requester reads later. The write is retried: it cannot fail on what the tool answered. A write the
  // database keeps refusing is logged, and the row is finished by finishAbandoned.
  async finish(call: { id: string; tenantId: string }, outcome: Record<string, unknown>): Promise<Record<string, unknown>> {
    const limits: JsonLimits = { maxDepth: RESULT_MAX_DEPTH + 1, maxBytes: this.config.tools.resultMaxBytes + OUTCOME_SLACK_BYTES };
    const written = boundedJson(outcome, limits);
    const kept =
      'text' in written
        ? outcome
        : {
            invocationId: outcome.invocationId,
            tool: outcome.tool,
            status: 'error',
            error: droppedResult(written, limits),
            durationMs: outcome.durationMs,
          };
    const text = jsonbSafe('text' in written ? written.text : JSON.stringify(kept));
    const answered = JSON.parse(text) as Record<string, unknown>;
    const bytes = Buffer.byteLength(text);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.storedAnswers.keep(
          call.tenantId,
          bytes,
          (tx, room) =>
            tx.parkedCall.update({
              where: { id: call.id },
              data: {
                status: 'done',
                outcome: (room.fits ? answered : notKeptOutcome(answered, bytes, room)) as Prisma.InputJsonObject,
                arguments: Prisma.DbNull,
              },
            }),
          (tx) => this.argumentBytes(tx, call.id),
        );
        return answered;
      } catch (error) {
        if (attempt >= FINISH_ATTEMPTS) {
          this.logger.error(
            `The outcome of approved call ${call.id} could not be stored: ${error instanceof Error ? error.message : String(error)}`,
          );
          return answered;
        }
        await sleep(FINISH_RETRY_MS * attempt);
      }
    }
  }

  // What a call's arguments count against storedAnswerBytes, as BudgetsRepository.storedAnswerBytes counts them.
  private async argumentBytes(tx: Prisma.TransactionClient, id: string): Promise<number> {
    const [row] = await tx.$queryRaw<Array<{ bytes: number | null }>>`
      SELECT pg_column_size(arguments) AS bytes FROM parked_calls WHERE id = ${id}::uuid`;
    return Number(row?.bytes ?? 0);
  }

  // Approved calls still not finished `afterMs` after their decision, past any deadline they could run
  // under: their instance stopped, or could not write their outcome. Each gets its final state with an error
  // saying so (whether it ran is not known) and is returned; at most `limit` a time.
  async finishAbandoned(afterMs: number, limit: number): Promise<{ call: ParkedCall; error: typeof OUTCOME_LOST }[]> {
    const due = await this.prisma.parkedCall.findMany({
      where: { status: 'approved', decidedAt: { lte: new Date(Date.now() - afterMs) } },
      take: limit,
    });
    const finished: { call: ParkedCall; error: typeof OUTCOME_LOST }[] = [];
    for (const call of due) {
      const outcome = { invocationId: call.id, tool: call.tool, status: 'error', error: OUTCOME_LOST };
      // Conditional: an outcome written meanwhile wins.
      const { count } = await this.prisma.parkedCall.updateMany({
        where: { id: call.id, status: 'approved' },
        data: { status: 'done', outcome, arguments: Prisma.DbNull },
      });
      if (count > 0) finished.push({ call, error: OUTCOME_LOST });
    }
    return finished;
  }

  // Decided calls (done, denied, expired) whose decision is older than `keptMs`, deleted: their outcome is an
  // answer stored for whoever asks for it later, kept as long as an Idempotency-Key's stored answer, and it
  // counts in the tenant's storedAnswerBytes until it goes. Their audit rows stay. At most `limit` a time.
  async pruneDecided(keptMs: number, limit: number): Promise<number> {
    return this.prisma.$executeRaw`DELETE FROM parked_calls WHERE id IN (
      SELECT id FROM parked_calls
      WHERE status IN ('done', 'denied', 'expired') AND decided_at < now() - make_interval(secs => ${keptMs / 1000})
      LIMIT ${limit})`;
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

const OUTCOME_LOST = {
  code: 'outcome_lost',
  message:
    'This call was approved, but the instance running it stopped before it stored the outcome; it may or may not have run. Check its effects before calling it again.',
  retryable: false,
};
