import { Global, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { appWorkerErrors, type AppWorkerTasks } from './app-worker.tasks.js';
import { resolveWorkerEntry, WORKER_POOL, WorkerPool } from './common/worker-pool/worker-pool.js';

// The app's one pool of worker threads; closed (running tasks finished) when the app shuts down. Features
// receive it as WORKER_POOL, typed with their own part of the task table.
@Injectable()
export class AppWorkerPool extends WorkerPool<AppWorkerTasks> implements OnApplicationShutdown {
  constructor() {
    super({ entry: resolveWorkerEntry(import.meta.url, 'app-worker.entry.js'), errors: appWorkerErrors });
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}

@Global()
@Module({ providers: [AppWorkerPool, { provide: WORKER_POOL, useExisting: AppWorkerPool }], exports: [WORKER_POOL] })
export class WorkerPoolModule {}
