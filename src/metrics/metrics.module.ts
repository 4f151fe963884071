import { Global, Module } from '@nestjs/common';
import { ChangeBusMetrics } from './change-bus-metrics.js';
import { LoopShareMetrics } from './loop-share-metrics.js';
import { Metrics } from './metrics.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsServer } from './metrics-server.js';

// Global: the features that own a measured thing (calls, the audit queue, caches, threads) report to it;
// it imports none of them.
@Global()
@Module({
  controllers: [MetricsController],
  providers: [{ provide: Metrics, useFactory: () => new Metrics() }, MetricsServer, ChangeBusMetrics, LoopShareMetrics],
  exports: [Metrics, MetricsServer],
})
export class MetricsModule {}
