import type pg from 'pg';
import { type BusTopic, ChangeBus, type ChangeBusStatus } from './change-bus.js';

// PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; batches stay under this.
export const MAX_PAYLOAD_BYTES = 7_800;
// Messages kept while the connection is down, sent once it is back.
const MAX_PENDING = 10_000;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;
// A connection that looks open but no longer answers (a silent network cut) is found by this probe, sent
// when nothing came over the connection for this long (under load the traffic itself shows it is alive).
const PROBE_INTERVAL_MS = 10_000;
const PROBE_TIMEOUT_MS = 5_000;

// [topic, message, 1 when this instance already delivered it to its own subscribers]
export type Entry = [string, unknown, 1?];
interface Payload {
  o: string;
  m: Entry[];
}

export interface PostgresChangeBusOptions {
  // A new, unconnected client each time (the bus owns it: it must not come from a pool).
  newClient: (applicationName: string) => pg.Client;
  channel: string;
}

// LISTEN/NOTIFY on one dedicated connection. Messages published in one turn of the event loop go out as one
// NOTIFY (split under the payload limit), on that same connection, so every instance receives them in the
// order they were published; PostgreSQL hands notifications to every listener in commit order.
export class PostgresChangeBus extends ChangeBus {
  private client: pg.Client | null = null;
  private connected = false;
  private stopped = false;
  private everConnected = false;
  private since = new Date();
  private reconnects = 0;
  private lastError: string | undefined;
  private pending: Entry[] = [];
  private dropped = 0;
  private flushScheduled = false;
  // The connection's queries one after another: a flush still sending when the next one is due, or a probe.
  private queue: Promise<unknown> = Promise.resolve();
  // When the connection last delivered a notification or answered a query.
  private lastHeardAt = 0;
  private backoffMs = BACKOFF_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private probeTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: PostgresChangeBusOptions) {
    super();
  }

  get applicationName(): string {
    return `toolgate-bus-${this.instanceId}`;
  }

  // Waits for the first attempt only: a database that is not there yet does not stop start-up.
  override async start(): Promise<void> {
    this.probeTimer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS).unref();
    await this.connect();
  }

  override async close(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.probeTimer) clearInterval(this.probeTimer);
    // What is queued for the other instances goes out before the connection closes.
    if (this.connected) await this.serially(() => this.flush());
    const client = this.client;
    this.client = null;
    this.connected = false;
    await client?.end().catch(() => undefined);
  }

  publish<T>(topic: BusTopic<T>, message: T): void {
    const deliveredHere = !topic.ordered || !this.connected;
    if (deliveredHere) this.deliver(topic.name, message);
    this.pending.push(deliveredHere ? [topic.name, message, 1] : [topic.name, message]);
    if (this.pending.length > MAX_PENDING) {
      this.dropped += this.pending.length - MAX_PENDING;
      this.pending.splice(0, this.pending.length - MAX_PENDING);
    }
    this.scheduleFlush();
  }

  status(): ChangeBusStatus {
    return {
      mode: 'postgres',
      connected: this.connected,
      instanceId: this.instanceId,
      since: this.since.toISOString(),
      reconnects: this.reconnects,
      ...(this.lastError ? { lastError: this.lastError } : {}),
      pending: this.connected ? 0 : this.pending.length,
      dropped: this.dropped,
      caches: this.connected
        ? 'invalidated across instances as changes happen'
        : "changes made on other instances reach this one's caches only when their entries expire (TTL) until the bus is back",
    };
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = this.options.newClient(this.applicationName);
    this.client = client;
    client.on('error', (error: Error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (notification) => {
      this.lastHeardAt = Date.now();
      if (notification.channel === this.options.channel && notification.payload) this.receive(notification.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.options.channel}"`);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    if (this.client !== client || this.stopped) return;
    this.connected = true;
    this.since = new Date();
    this.lastHeardAt = Date.now();
    this.backoffMs = BACKOFF_MIN_MS;
    if (this.everConnected) {
      this.logger.log(`reconnected to the change bus (channel ${this.options.channel})`);
      this.resync();
    }
    this.everConnected = true;
    this.scheduleFlush();
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    const wasConnected = this.connected;
    this.connected = false;
    this.lastError = error.message;
    client.removeAllListeners('notification');
    client.end().catch(() => undefined);
    if (this.stopped) return;
    if (wasConnected) {
      this.since = new Date();
      this.logger.warn(`lost the change bus connection (${error.message}); caches fall back to their TTL until it is back`);
    }
    this.reconnects++;
    const delay = this.backoffMs * (0.5 + Math.random() / 2);
    this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF_MAX_MS);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  private async probe(): Promise<void> {
    const client = this.client;
    if (!client || !this.connected || Date.now() - this.lastHeardAt < PROBE_INTERVAL_MS) return;
    // The timeout counts from when the probe is sent, not while it waits behind a flush.
    await this.serially(async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          client.query('SELECT 1'),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('the bus connection did not answer a probe')), PROBE_TIMEOUT_MS);
          }),
        ]);
        this.lastHeardAt = Date.now();
      } catch (error) {
        this.lost(client, error as Error);
      } finally {
        clearTimeout(timer);
      }
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || !this.connected) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.serially(() => this.flush());
    });
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async flush(): Promise<void> {
    const client = this.client;
    if (!client || !this.connected || this.pending.length === 0) return;
    const out = batches(this.instanceId, this.pending, this.logger);
    this.pending = [];
    for (let i = 0; i < out.length; i++) {
      try {
        await client.query('SELECT pg_notify($1, $2)', [this.options.channel, out[i].payload]);
        this.lastHeardAt = Date.now();
      } catch (error) {
        // The connection is going: what was not sent waits for the next one, ahead of anything newer.
        this.pending = [...out.slice(i).flatMap((batch) => batch.entries), ...this.pending];
        this.lost(client, error as Error);
        return;
      }
    }
  }

  private receive(raw: string): void {
    let payload: Payload;
    try {
      payload = JSON.parse(raw) as Payload;
    } catch {
      this.logger.warn('ignored a change bus message that is not JSON');
      return;
    }
    const own = payload.o === this.instanceId;
    for (const [topic, message, deliveredHere] of payload.m) {
      if (own && deliveredHere) continue;
      this.deliver(topic, message);
    }
  }
}

// Splits entries into NOTIFY payloads under the limit, in order. An entry that alone exceeds it is a caller's
// bug (messages carry ids); it is dropped with an error rather than breaking the whole batch.
export function batches(
  origin: string,
  entries: Entry[],
  logger?: { error(message: string): void },
): Array<{ payload: string; entries: Entry[] }> {
  const head = `{"o":${JSON.stringify(origin)},"m":[`;
  const empty = Buffer.byteLength(head) + 2;
  const out: Array<{ payload: string; entries: Entry[] }> = [];
  let texts: string[] = [];
  let batch: Entry[] = [];
  let size = empty;
  const close = () => {
    if (batch.length > 0) out.push({ payload: `${head}${texts.join(',')}]}`, entries: batch });
    texts = [];
    batch = [];
    size = empty;
  };
  for (const entry of entries) {
    const text = JSON.stringify(entry);
    const bytes = Buffer.byteLength(text) + 1;
    if (empty + bytes > MAX_PAYLOAD_BYTES) {
      logger?.error(`dropped a change bus message of ${bytes} bytes on ${entry[0]}: over the NOTIFY limit`);
      continue;
    }
    if (size + bytes > MAX_PAYLOAD_BYTES) close();
    texts.push(text);
    batch.push(entry);
    size += bytes;
  }
  close();
  return out;
}
