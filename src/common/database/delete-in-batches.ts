import type { Logger } from '@nestjs/common';

// A periodic sweep's deletion: `deleteSome(limit)` deletes at most `limit` rows and answers how many, and is
// called again while it comes back full, so no statement holds many rows' locks or runs long. A failure is
// logged (naming `what`), and the next sweep takes up where this one stopped. Answers how many rows went.
export async function deleteInBatches(
  logger: Logger,
  what: string,
  deleteSome: (limit: number) => Promise<number>,
  batch = 1000,
): Promise<number> {
  let deleted = 0;
  try {
    for (;;) {
      const count = await deleteSome(batch);
      deleted += count;
      if (count < batch) return deleted;
    }
  } catch (error) {
    logger.warn(`Deleting ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
    return deleted;
  }
}
