import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { AuditWriter } from '../audit/audit-writer.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { InFlightCalls } from '../tools/in-flight-calls.js';

// On SIGTERM, SIGINT or SIGHUP (or app.close()), in this order: refuse new tool calls, let running ones finish within
// the grace period, cancel the rest (their process groups are killed), flush the audit log. Nest then
// closes the HTTP server and, last, the database.
@Injectable()
export class GracefulShutdown implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');

  constructor(
    private readonly calls: InFlightCalls,
    private readonly audit: AuditWriter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    const running = this.calls.size;
    const { finished, cancelled } = await this.calls.drain(this.config.shutdownGraceMs);
    if (running > 0) this.logger.log(`${signal ?? 'shutdown'}: ${finished} running calls finished, ${cancelled} cancelled`);
    await this.audit.close();
  }
}
