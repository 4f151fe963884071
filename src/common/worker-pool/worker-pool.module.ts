import { Global, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { WorkerPool } from './worker-pool.js';

// The app's one pool of worker threads; closed (running tasks finished) when the app shuts down.
@Injectable()
export class AppWorkerPool extends WorkerPool implements OnApplicationShutdown {
  constructor() {
    super();
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}

@Global()
@Module({ providers: [AppWorkerPool], exports: [AppWorkerPool] })
export class WorkerPoolModule {}
