import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { appWorkerErrors, type AppWorkerTasks } from './app-worker.tasks.js';
import { resolveWorkerEntry, WORKER_POOL, WorkerPool } from './common/worker-pool/worker-pool.js';
import { APP_CONFIG, type AppConfig } from './config/app-config.js';
import { Metrics } from './metrics/metrics.js';
import { TenantCpuShares } from './common/cpu-shares/tenant-cpu-shares.js';

// The app's one pool of worker threads; closed (running tasks finished) when the app shuts down. Features
// receive it as WORKER_POOL, typed with their own part of the task table.
@Injectable()
export class AppWorkerPool extends WorkerPool<AppWorkerTasks> implements OnApplicationShutdown {
  constructor(metrics: Metrics, @Inject(APP_CONFIG) config: AppConfig, cpuShares: TenantCpuShares) {
    super({
      entry: resolveWorkerEntry(import.meta.url, 'app-worker.entry.js'),
      errors: appWorkerErrors,
      threads: config.workerPool.threads,
      perKeyThreads: config.workerPool.tenantThreads,
      cpuGroupOf: cpuShares.threadGroup,
      // The shared threads run from start-up. A thread started for a task loads the whole task table first:
      // on a busy machine (one tenant's costly searches and commands) that took a second, and the task that
      // waited for it could be another tenant's (one search of B's: 1,185 ms against 27 ms).
      warmThreads: config.workerPool.threads,
    });
    metrics.gauge(
      'toolgate_worker_pool_threads',
      'Worker pool threads running now (the shared ones from start-up, the reserved one with its first task)',
      () => this.running,
    );
    metrics.gauge('toolgate_worker_pool_max_threads', 'Worker pool threads at most', () => this.threads);
    metrics.gauge('toolgate_worker_pool_queued_tasks', 'Worker pool tasks waiting for a thread', () => this.queued);
    metrics.gauge(
      'toolgate_worker_pool_utilization',
      'Share of the pool threads capacity spent running tasks since start (0-1)',
      () => this.utilization,
    );
    metrics.gauge('toolgate_worker_pool_completed_tasks', 'Worker pool tasks completed since start', () => this.completed);
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}

@Global()
@Module({ providers: [AppWorkerPool, { provide: WORKER_POOL, useExisting: AppWorkerPool }], exports: [WORKER_POOL] })
export class WorkerPoolModule {}
