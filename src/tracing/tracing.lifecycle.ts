import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { shutdownTracing } from '../common/tracing/tracer.js';

// Sends the spans still buffered when the app stops (nothing to do when tracing is off).
@Injectable()
export class TracingLifecycle implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return shutdownTracing();
  }
}
