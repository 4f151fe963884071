import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';

// A typed message kind on the bus. `ordered`: this instance's own subscribers get the message when it comes
// back from the bus, in the one order every instance sees (the tool event stream); otherwise they get it at
// once, inside publish (cache invalidations: the instance that made a change must never see it stale).
export interface BusTopic<T> {
  readonly name: string;
  readonly ordered: boolean;
  // Carries T for the type checker only.
  readonly _message?: T;
}

export function busTopic<T>(name: string, options: { ordered?: boolean } = {}): BusTopic<T> {
  return { name, ordered: options.ordered ?? false };
}

export interface ChangeBusStatus {
  mode: 'postgres' | 'in-process';
  connected: boolean;
  instanceId: string;
  // PostgreSQL: when the connection was last made or lost.
  since?: string;
  reconnects?: number;
  lastError?: string;
  // Messages published while the connection was down, sent when it is back (bounded; the oldest are dropped).
  pending?: number;
  dropped?: number;
  // What the caches do meanwhile.
  caches?: string;
}

type Handler = (message: unknown) => void;

// Carries small change messages (ids, never secrets) to every instance of the service, this one included.
// A generic mechanism: features declare their topics and subscribe their own handlers.
export abstract class ChangeBus {
  readonly instanceId = randomBytes(4).toString('hex');
  protected readonly logger = new Logger('ChangeBus');
  private readonly handlers = new Map<string, Handler[]>();
  private readonly resyncHandlers: Array<() => void> = [];

  abstract publish<T>(topic: BusTopic<T>, message: T): void;
  abstract status(): ChangeBusStatus;

  subscribe<T>(topic: BusTopic<T>, handler: (message: T) => void): void {
    const list = this.handlers.get(topic.name) ?? [];
    list.push(handler as Handler);
    this.handlers.set(topic.name, list);
  }

  // Called after the bus was down: messages of other instances may have been missed, so caches drop
  // everything they hold (they fell back to their TTL meanwhile).
  onResync(handler: () => void): void {
    this.resyncHandlers.push(handler);
  }

  async start(): Promise<void> {}
  async close(): Promise<void> {}

  protected deliver(topicName: string, message: unknown): void {
    for (const handler of this.handlers.get(topicName) ?? []) {
      try {
        handler(message);
      } catch (error) {
        this.logger.error(`a handler of ${topicName} failed: ${String(error)}`);
      }
    }
  }

  protected resync(): void {
    for (const handler of this.resyncHandlers) {
      try {
        handler();
      } catch (error) {
        this.logger.error(`a resync handler failed: ${String(error)}`);
      }
    }
  }
}

// One process (PGlite): publishing is delivering.
export class InProcessChangeBus extends ChangeBus {
  publish<T>(topic: BusTopic<T>, message: T): void {
    this.deliver(topic.name, message);
  }

  status(): ChangeBusStatus {
    return { mode: 'in-process', connected: true, instanceId: this.instanceId };
  }
}
