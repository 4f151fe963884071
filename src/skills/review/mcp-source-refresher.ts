import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { SkillsRepository } from '../skills.repository.js';
import { SkillReviewService } from './skill-review.service.js';

// Skills claimed per tick; the rest wait for the next one.
const CLAIM_BATCH = 25;

// Reads every MCP source again each MCP_SOURCE_REFRESH_S (0: never). Each tick claims the skills due in one
// statement that skips rows another instance holds and marks them read, so across instances each source is
// read about once per interval; the comparison itself runs under the skill's lock and records a change once.
@Injectable()
export class McpSourceRefresher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('McpSourceRefresher');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly skills: SkillsRepository,
    private readonly review: SkillReviewService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const intervalMs = this.config.tools.mcpSourceRefreshMs;
    if (intervalMs === 0) return;
    // Ticks at a quarter of the interval (1 s to 60 s) so a due source waits little past its time.
    const tickMs = Math.min(60_000, Math.max(1_000, Math.floor(intervalMs / 4)));
    this.timer = setInterval(() => {
      this.running ??= this.tick(intervalMs).finally(() => (this.running = null));
    }, tickMs).unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async tick(intervalMs: number): Promise<void> {
    try {
      const due = await this.skills.claimDueSources(intervalMs, CLAIM_BATCH);
      for (const { id, tenantId } of due) {
        if (this.stopped) return;
        await this.review.refreshQuietly(tenantId, id);
      }
    } catch (error) {
      this.logger.warn({ msg: 'Reading MCP sources again failed; retried at the next tick', error: (error as Error).message });
    }
  }
}
