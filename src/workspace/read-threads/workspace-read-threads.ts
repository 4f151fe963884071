import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { Metrics } from '../../metrics/metrics.js';
import { ReadThreads } from './read-threads.js';

// The app's read threads (WORKSPACE_READ_THREADS), stopped when the app shuts down.
@Injectable()
export class WorkspaceReadThreads extends ReadThreads implements OnApplicationShutdown {
  constructor(@Inject(APP_CONFIG) config: AppConfig, metrics: Metrics) {
    super(config.workspace.readThreads);
    metrics.gauge('toolgate_read_threads', 'Read threads configured (WORKSPACE_READ_THREADS)', () => this.size);
    metrics.gauge('toolgate_read_threads_running', 'Read threads started', () => this.running);
    metrics.gauge('toolgate_read_threads_busy', 'Read threads holding at least one read when sampled', () => this.busy);
    metrics.gauge('toolgate_read_threads_pending_reads', 'Reads sent to the read threads and not answered yet', () => this.pendingReads);
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}
