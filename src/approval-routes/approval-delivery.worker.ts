import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { AppError } from '../common/errors/app-error.js';
import { SecretBox } from '../common/secrets/secret-box.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { safeFetch } from '../execution/net/safe-fetch.js';
import { type ApprovalEvent, slackMessage } from './approval-events.js';
import { ApprovalRoutesRepository, type ClaimedDelivery } from './approval-routes.repository.js';

// Deliveries claimed (and sent at once) per round.
const CLAIM_BATCH = 20;
// A receiver's answer is read to this many bytes at most (its status is what counts).
const RESPONSE_MAX_BYTES = 1024;
// The lease outlasts the request's own bound by this much: a claim is not taken over while still sending.
const LEASE_MARGIN_MS = 30_000;
const PRUNE_EVERY_MS = 10 * 60_000;
const ERROR_MAX_CHARS = 500;

// Sends approval routes' deliveries: polls for due rows (and is woken when this instance queues one), sends
// each at most once at a time across instances, and retries a failure with exponential backoff (the
// base, then 4x, 16x, ...) until APPROVAL_DELIVERY_ATTEMPTS sends were made. Every send is judged by the
// fetch_url address rules again (a name may have been repointed since the route was made), bounded by
// APPROVAL_DELIVERY_TIMEOUT_MS, and reads at most 1 KiB of the answer. Nothing here holds up a call or a decision.
@Injectable()
export class ApprovalDeliveryWorker implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ApprovalRoutes');
  private readonly settings: AppConfig['calls']['approvalDelivery'];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private lastPrune = 0;
  private readonly shutdown = new AbortController();

  constructor(
    private readonly repository: ApprovalRoutesRepository,
    private readonly box: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.settings = config.calls.approvalDelivery;
  }

  onModuleInit(): void {
    const every = Math.min(1000, Math.max(20, this.settings.retryBaseMs));
    this.timer = setInterval(() => this.kick(), every);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    // A send in flight is cut short; its lease runs out and another instance (or the next start) sends it.
    this.shutdown.abort();
    await this.running;
  }

  // Runs a round now, or right after the one in progress.
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.rounds().finally(() => {
      this.running = null;
    });
  }

  private async rounds(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.prune();
        for (;;) {
          const claimed = await this.repository.claimDue(CLAIM_BATCH, this.settings.timeoutMs + LEASE_MARGIN_MS);
          await Promise.all(claimed.map((delivery) => this.deliver(delivery)));
          if (claimed.length < CLAIM_BATCH || this.stopped) break;
        }
      } catch (error) {
        if (!this.stopped) this.logger.warn(`Sending approval deliveries failed: ${messageOf(error)}`);
      }
    } while (this.again && !this.stopped);
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const body =
        delivery.kind === 'slack' ? JSON.stringify(slackMessage(JSON.parse(delivery.payload) as ApprovalEvent)) : delivery.payload;
      const res = await safeFetch(
        {
          url: this.targetOf(delivery),
          method: 'POST',
          headers: this.headersFor(delivery, body),
          body,
          timeoutMs: this.settings.timeoutMs,
          maxBytes: RESPONSE_MAX_BYTES,
          signal: this.shutdown.signal,
        },
        { allowHosts: this.config.tools.fetch.allowHosts, maxRedirects: 0 },
      );
      statusCode = res.status;
      if (res.status < 200 || res.status >= 300) error = `the receiver answered ${res.status}`;
    } catch (caught) {
      error = caught instanceof AppError ? `${caught.code}: ${caught.message}` : messageOf(caught);
    }
    if (this.stopped && error !== null) return;
    const delivered = error === null;
    const last = delivery.attempts >= this.settings.attempts;
    try {
      await this.repository.finishAttempt(delivery.id, delivery.attempts, {
        status: delivered ? 'delivered' : last ? 'failed' : 'pending',
        nextAttemptAt: delivered || last ? undefined : new Date(Date.now() + this.backoffMs(delivery.attempts)),
        statusCode,
        error: error === null ? null : error.slice(0, ERROR_MAX_CHARS),
      });
    } catch (caught) {
      // The lease runs out and the delivery is sent again: a receiver de-duplicates on webhook-id.
      this.logger.warn(`Recording approval delivery ${delivery.id} failed: ${messageOf(caught)}`);
    }
  }

  // A Slack route's URL rests sealed in its secret (a row made before that keeps it in url).
  private targetOf(delivery: ClaimedDelivery): string {
    return delivery.kind === 'slack' && delivery.secret !== null ? this.box.open(delivery.secret) : delivery.url;
  }

  // After the n-th failed send: base x 4^(n-1).
  backoffMs(attempt: number): number {
    return this.settings.retryBaseMs * 4 ** (attempt - 1);
  }

  // Standard Webhooks: webhook-id (the delivery's id, the same on every retry), webhook-timestamp (this
  // send's) and webhook-signature (v1, HMAC-SHA256 of "<id>.<timestamp>.<body>" under the route's secret).
  private headersFor(delivery: ClaimedDelivery, body: string): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (delivery.kind !== 'webhook' || delivery.secret === null) return headers;
    const now = new Date();
    const signature = new Webhook(this.box.open(delivery.secret)).sign(delivery.id, now, body);
    return {
      ...headers,
      'webhook-id': delivery.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    };
  }

  private async prune(): Promise<void> {
    if (Date.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = Date.now();
    await this.repository.prune(this.settings.retentionMs, this.settings.keptPerRoute);
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
