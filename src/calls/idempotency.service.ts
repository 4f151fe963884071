import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { idempotencyInProgress, idempotencyKeyReused, invalidIdempotencyKey } from './calls.errors.js';
import { canonicalJson } from '../common/json/canonical-json.js';
import { boundedJson, droppedResult, type JsonLimitExceeded, type JsonLimits, RESULT_MAX_DEPTH } from '../common/json/bounded-json.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { ToolCallOutcome } from '../tools/call-dispatcher.js';
import { type IdempotencyScope, IdempotencyRepository } from './idempotency.repository.js';
import { tenantBudgetExceeded } from '../budgets/budgets.errors.js';
import { notKeptOutcome, StoredAnswers } from '../budgets/stored-answers.js';

// Longer than any call may run (the longest tool deadline is 120 s): a request that still holds its key
// past this is taken to have died with its instance, and a retry of the same call may run it.
const LEASE_MS = 5 * 60_000;
const POLL_MS = 50;
const SWEEP_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 1000;
// Writing a stored answer is retried (the database may blip), never given up for a release.
const STORE_ATTEMPTS = 4;
const STORE_RETRY_MS = 250;
// An outcome wraps its result in one object with a few small fields.
const OUTCOME_LEVELS = 1;
const OUTCOME_SLACK_BYTES = 64 * 1024;
const KEY = /^[\x21-\x7e]{1,255}$/;

// Idempotency keys after the IETF draft "The Idempotency-Key HTTP Header Field" (draft-ietf-httpapi-
// idempotency-key-header) and Stripe's API: the first request with a key stores its answer (24 h by
// default); a repeat of the same call gets that answer again, marked replayed, and the tool does not run
// twice; the same key with another call is 422 idempotency_key_reused. A repeat that arrives while the
// first still runs waits for its answer, up to IDEMPOTENCY_WAIT_MS, then answers 409
// idempotency_in_progress (Retry-After: 1), as the draft and Stripe do for concurrent use of a key.
// Every call that ran (or was parked for approval) keeps its answer, whatever it was: an error, a timeout,
// a result dropped for its size, an explicit cancellation. Only a refusal before the run (invalid
// arguments, rate limit, shutdown) releases the key, so the retry is judged afresh (Stripe stores no result
// for a request that failed validation or never started executing). The callers run a keyed call apart
// from its client's connection, so a client that goes away does not cancel it: its retry gets the answer.
@Injectable()
export class IdempotencyService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Idempotency');
  // Calls of this instance still running, by key: a repeat here wakes when they end instead of polling.
  private readonly running = new Map<string, Promise<unknown>>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: IdempotencyRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly storedAnswers: StoredAnswers,
  ) {}

  static checkKey(key: string): void {
    if (!KEY.test(key)) {
      throw invalidIdempotencyKey('An idempotency key is 1 to 255 visible ASCII characters (no spaces); a UUID is a good choice');
    }
  }

  onModuleInit(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  async run(
    scope: IdempotencyScope,
    call: unknown,
    execute: () => Promise<ToolCallOutcome>,
  ): Promise<{ outcome: ToolCallOutcome; replayed: boolean }> {
    IdempotencyService.checkKey(scope.key);
    await this.assertRoomForAnswers(scope.tenantId);
    const fingerprint = createHash('sha256').update(canonicalJson(call)).digest('hex');
    if (await this.repository.claim(scope, fingerprint, this.config.calls.idempotencyTtlMs, LEASE_MS)) {
      return { outcome: await this.runClaimed(scope, execute), replayed: false };
    }
    const deadline = Date.now() + this.config.calls.idempotencyWaitMs;
    for (;;) {
      const stored = await this.repository.find(scope);
      // Expired or released in between (the first request was refused): this one may take the key.
      if (!stored) {
        if (await this.repository.claim(scope, fingerprint, this.config.calls.idempotencyTtlMs, LEASE_MS)) {
          return { outcome: await this.runClaimed(scope, execute), replayed: false };
        }
        continue;
      }
      if (stored.fingerprint !== fingerprint) {
        throw idempotencyKeyReused();
      }
      if (stored.state === 'done') return { outcome: stored.outcome as ToolCallOutcome, replayed: true };
      const left = deadline - Date.now();
      if (left <= 0) {
        throw idempotencyInProgress();
      }
      await this.waitFor(scopeKey(scope), left);
    }
  }

  private async runClaimed(scope: IdempotencyScope, execute: () => Promise<ToolCallOutcome>): Promise<ToolCallOutcome> {
    const id = scopeKey(scope);
    const done = (async () => {
      let outcome: ToolCallOutcome;
      try {
        outcome = await execute();
      } catch (error) {
        // Refused (an AppError from the gate, or from the executor before it did anything) or failed before
        // the tool started: the call path answers every run with an outcome, never by throwing.
        await this.repository
          .release(scope)
          .catch((failure: unknown) => this.logger.warn(`Releasing an idempotency key failed: ${describe(failure)}`));
        throw error;
      }
      // The tool ran: from here on the key keeps this answer, and is never released.
      return this.store(scope, outcome);
    })();
    this.running.set(id, done);
    try {
      return await done;
    } finally {
      this.running.delete(id);
    }
  }

  // A keyed call is refused before it runs while the tenant's stored answers fill its budget: its answer
  // could not be kept, and a retry would then run it again.
  private async assertRoomForAnswers(tenantId: string): Promise<void> {
    const full = await this.storedAnswers.full(tenantId);
    if (!full) return;
    throw tenantBudgetExceeded(
      'storedAnswerBytes',
      full.budget,
      full.stored,
      1,
      `Calls with an Idempotency-Key keep their answers for ${Math.round(this.config.calls.idempotencyTtlMs / 3_600_000)} h; call without the header, or wait for stored answers to expire.`,
    );
  }

  // The answer as it is kept and replayed: the outcome's JSON, or (should it not fit) an error naming the cap,
  // which this request answers too, so the first answer and every replay are the same. An answer that does
  // not fit in the tenant's storedAnswerBytes budget is answered to this request, and a stand-in saying
  // so is kept for the replays: the call never runs twice, and the database never holds more than the
  // budget. A write that keeps failing leaves the key claimed; its lease then lets the same call run
  // again (see LEASE_MS).
  private async store(scope: IdempotencyScope, outcome: ToolCallOutcome): Promise<ToolCallOutcome> {
    const limits: JsonLimits = {
      maxDepth: RESULT_MAX_DEPTH + OUTCOME_LEVELS,
      maxBytes: this.config.tools.resultMaxBytes + OUTCOME_SLACK_BYTES,
    };
    const written = boundedJson(outcome, limits);
    const kept = 'text' in written ? outcome : unstorable(outcome, written, limits);
    const text = 'text' in written ? written.text : JSON.stringify(kept);
    for (let attempt = 1; ; attempt++) {
      try {
        const bytes = Buffer.byteLength(text);
        await this.storedAnswers.keep(scope.tenantId, bytes, (tx, room) =>
          this.repository.completeLocked(tx, scope, room.fits ? text : JSON.stringify(notKeptOutcome(kept, bytes, room))),
        );
        return kept;
      } catch (error) {
        if (attempt >= STORE_ATTEMPTS) {
          this.logger.error(
            `The answer of invocation ${outcome.invocationId} could not be stored under its idempotency key: ${describe(error)}`,
          );
          return kept;
        }
        await sleep(STORE_RETRY_MS * attempt);
      }
    }
  }

  // Until the local call with this key ends (within `left`), or a poll interval for one on another instance.
  private async waitFor(id: string, left: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const local = this.running.get(id);
    await Promise.race([
      local ? local.then(noop, noop) : new Promise(noop),
      new Promise((resolve) => (timer = setTimeout(resolve, local ? left : Math.min(left, POLL_MS)))),
    ]);
    clearTimeout(timer);
  }

  private async sweep(): Promise<void> {
    try {
      while ((await this.repository.deleteExpired(SWEEP_BATCH)) === SWEEP_BATCH);
    } catch (error) {
      this.logger.warn(`Deleting expired idempotency keys failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

const noop = () => undefined;
const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

// An outcome whose JSON does not fit (its result was capped already, so this is a guard, not a path).
function unstorable(outcome: ToolCallOutcome, exceeded: JsonLimitExceeded, limits: JsonLimits): ToolCallOutcome {
  const durationMs = 'durationMs' in outcome ? outcome.durationMs : 0;
  return { invocationId: outcome.invocationId, tool: outcome.tool, status: 'error', error: droppedResult(exceeded, limits), durationMs };
}

const scopeKey = (s: IdempotencyScope) => `${s.tenantId}\n${s.projectId}\n${s.apiKeyId}\n${s.key}`;
