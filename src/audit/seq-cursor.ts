import { invalidCursor } from '../common/pagination/cursor.js';

// The log pages by write order (seq), not by time: rows of one batch share their timestamp.
export const encodeSeqCursor = (seq: bigint | string) => Buffer.from(`seq:${seq}`).toString('base64url');

const MAX_SEQ = 2n ** 63n - 1n;

export function decodeSeqCursor(cursor: string): bigint {
  const match = /^seq:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  // A forged number past bigint's range would otherwise reach the database as an error.
  if (!match || BigInt(match[1]) > MAX_SEQ) throw invalidCursor();
  return BigInt(match[1]);
}
