import type { NewSkillChange, QueuedChange } from './skill-changes.repository.js';

// Room in one skill's review queue, held to a number of bytes and of decided changes kept for the record.
// Pending changes are never dropped (each waits for an admin); decided ones go, oldest first, to make room
// for a new change, and past the newest `keptDecided` in any case. A change that does not fit even then is
// not raised. Built under the skill's lock from what the queue holds (SkillChangesRepository.queued).
export class ReviewQueueRoom {
  private used: number;
  private readonly sizes: Map<string, number>;
  // Oldest first.
  private readonly decided: QueuedChange[];
  // Decided changes to delete, in the same transaction.
  readonly evicted: string[] = [];

  constructor(
    queued: QueuedChange[],
    private readonly maxBytes: number,
    keptDecided: number,
  ) {
    this.used = queued.reduce((sum, change) => sum + change.bytes, 0);
    this.sizes = new Map(queued.map((change) => [change.id, change.bytes]));
    this.decided = queued.filter((change) => !change.pending).sort((a, b) => a.at.getTime() - b.at.getTime());
    while (this.decided.length > keptDecided) this.evictOldest();
  }

  // Whether a change of `bytes` fits, in place of the pending change `replacing` if it is given: decided
  // changes are dropped, oldest first, until it does or none is left. Counted in when it fits.
  take(bytes: number, replacing?: string): boolean {
    const freed = replacing === undefined ? 0 : (this.sizes.get(replacing) ?? 0);
    while (this.used - freed + bytes > this.maxBytes && this.decided.length > 0) this.evictOldest();
    if (this.used - freed + bytes > this.maxBytes) return false;
    this.used += bytes - freed;
    if (replacing !== undefined) this.sizes.set(replacing, bytes);
    return true;
  }

  private evictOldest(): void {
    const oldest = this.decided.shift();
    if (!oldest) return;
    this.used -= oldest.bytes;
    this.evicted.push(oldest.id);
  }
}

// A change's size as JSON text, as SkillChangesRepository.queued measures the ones kept.
export const changeBytes = (change: NewSkillChange): number =>
  Buffer.byteLength(JSON.stringify([change.previous, change.proposed, change.diff, change.flags]));
