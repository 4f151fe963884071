import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

// What a person approves, named in 64 hex digits: SHA-256 of the arguments' canonical JSON (object keys
// sorted at every level), so a receiver or an approver can bind a decision to exactly these arguments.
export const argumentsDigest = (args: unknown): string => createHash('sha256').update(canonicalJson(args)).digest('hex');
