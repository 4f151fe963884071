import { Inject, Injectable } from '@nestjs/common';
import { ChangeBus } from '../common/bus/change-bus.js';
import { Metrics } from './metrics.js';

// The change bus is a common mechanism and reports to nobody; its state is read here when /metrics is
// scraped (the same figures /health/ready shows), so an operator can alert on an instance whose caches
// fell back to their TTL.
@Injectable()
export class ChangeBusMetrics {
  constructor(@Inject(ChangeBus) bus: ChangeBus, metrics: Metrics) {
    metrics.gauge(
      'toolgate_change_bus_connected',
      '1 while the change bus reaches the other instances (always 1 in-process), 0 while caches fall back to their TTL',
      () => (bus.status().connected ? 1 : 0),
    );
    metrics.counter(
      'toolgate_change_bus_reconnects_total',
      'Reconnection attempts after the change bus connection was lost or refused',
      () => bus.status().reconnects ?? 0,
    );
    metrics.gauge(
      'toolgate_change_bus_pending_messages',
      'Messages published while the bus was down, waiting to be sent',
      () => bus.status().pending ?? 0,
    );
    metrics.counter(
      'toolgate_change_bus_dropped_messages_total',
      'Messages dropped because too many waited while the bus was down',
      () => bus.status().dropped ?? 0,
    );
  }
}
