import { createHash, timingSafeEqual } from 'node:crypto';
import type { AppError } from '../common/errors/app-error.js';
import { metricsTokenInvalid, metricsTokenMissing } from './metrics.errors.js';

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

// Who may scrape: with METRICS_TOKEN, the bearer of it (compared as hashes, in constant time); without
// it, anyone who reaches the listener (only the separate METRICS_PORT serves without a token).
export class MetricsAccess {
  private readonly tokenHash: Buffer | null;

  constructor(token: string | null) {
    this.tokenHash = token === null ? null : sha256(token);
  }

  // Null when the scrape may go on; else the 401 to answer.
  refusal(authorization: string | string[] | undefined): AppError | null {
    if (this.tokenHash === null) return null;
    if (typeof authorization !== 'string' || !authorization.startsWith('Bearer ')) return metricsTokenMissing();
    return timingSafeEqual(sha256(authorization.slice('Bearer '.length).trim()), this.tokenHash) ? null : metricsTokenInvalid();
  }
}
