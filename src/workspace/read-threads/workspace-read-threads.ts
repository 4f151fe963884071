import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { ReadThreads } from './read-threads.js';

// The app's read threads (WORKSPACE_READ_THREADS), stopped when the app shuts down.
@Injectable()
export class WorkspaceReadThreads extends ReadThreads implements OnApplicationShutdown {
  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super(config.workspace.readThreads);
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}
