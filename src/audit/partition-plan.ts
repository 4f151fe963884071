// Pure arithmetic of the audit partitions: which ranges to create and which to drop. Times are epoch ms,
// ranges half-open [from, to), aligned to the partition width in UTC.

export interface PartitionRange {
  name: string;
  from: number;
  to: number;
}

export const DAY_MS = 86_400_000;

// One day per partition, or a quarter of the retention when it is shorter than a day (test set-ups): a
// row then lives at most retention + width before its partition goes.
export function partitionWidthMs(retentionMs: number): number {
  if (retentionMs === 0 || retentionMs >= DAY_MS) return DAY_MS;
  return Math.max(1000, Math.floor(retentionMs / 4000) * 1000);
}

export function partitionName(from: number): string {
  const iso = new Date(from).toISOString();
  // invocations_p20261123t000000: sorts by time, unique because ranges never overlap.
  return `invocations_p${iso.slice(0, 10).replaceAll('-', '')}t${iso.slice(11, 19).replaceAll(':', '')}`;
}

// The ranges to create so that [from, to) is covered, cut at multiples of `width` and around the
// partitions that exist (an earlier width may have left others).
export function rangesToCreate(existing: readonly PartitionRange[], from: number, to: number, width: number): PartitionRange[] {
  const taken = [...existing].sort((a, b) => a.from - b.from);
  const out: PartitionRange[] = [];
  let at = Math.floor(from / width) * width;
  while (at < to) {
    const covering = taken.find((p) => p.from <= at && at < p.to);
    if (covering) {
      at = covering.to;
      continue;
    }
    const next = taken.find((p) => p.from > at);
    const end = Math.min(Math.floor(at / width) * width + width, next ? next.from : Infinity);
    out.push({ name: partitionName(at), from: at, to: end });
    at = end;
  }
  return out;
}

// Partitions whose every row started before the cutoff; none when retention is 0 (keep forever).
export function expiredRanges(existing: readonly PartitionRange[], now: number, retentionMs: number): PartitionRange[] {
  if (retentionMs === 0) return [];
  const cutoff = now - retentionMs;
  return existing.filter((p) => p.to <= cutoff);
}
