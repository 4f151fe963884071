import { Inject, Injectable } from '@nestjs/common';
import { LoopShare } from '../common/scheduling/loop-share.js';
import { Metrics } from './metrics.js';

// The share of the event loop (LoopShare) is a common mechanism and reports to nobody; its figures are read
// here when /metrics is scraped.
@Injectable()
export class LoopShareMetrics {
  constructor(@Inject(LoopShare) share: LoopShare, metrics: Metrics) {
    metrics.gauge(
      'toolgate_calls_waiting_for_share',
      'Calls waiting to start because the event loop is busy and their tenant has spent more than its split of it',
      () => share.waiting,
    );
    metrics.counter(
      'toolgate_call_share_waits_total',
      "Calls that waited to start for their tenant's share of the event loop",
      () => share.waits,
    );
  }
}
