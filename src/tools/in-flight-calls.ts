import { Injectable } from '@nestjs/common';
import { shuttingDown } from './tools.errors.js';

// The tool calls running right now, so a shutdown can let them finish and then cancel the rest
// (which kills their child processes) instead of leaving orphans behind.
@Injectable()
export class InFlightCalls {
  private readonly running = new Map<string, { controller: AbortController; done: Promise<unknown> }>();
  private draining = false;

  get isDraining(): boolean {
    return this.draining;
  }

  get size(): number {
    return this.running.size;
  }

  // Refuses new calls once the service is shutting down.
  admit(): void {
    if (this.draining) {
      throw shuttingDown();
    }
  }

  track(invocationId: string, controller: AbortController, done: Promise<unknown>): void {
    this.running.set(invocationId, { controller, done });
    void done.finally(() => this.running.delete(invocationId));
  }

  // Stop admitting, give running calls `graceMs` to finish, then cancel what is left and wait for it.
  async drain(graceMs: number): Promise<{ finished: number; cancelled: number }> {
    this.draining = true;
    const atStart = this.running.size;
    const all = () => Promise.allSettled([...this.running.values()].map((c) => c.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    const cancelled = this.running.size;
    for (const call of this.running.values()) call.controller.abort(new Error('shutting down'));
    await all();
    return { finished: atStart - cancelled, cancelled };
  }
}
