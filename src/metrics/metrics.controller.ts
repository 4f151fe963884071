import { Controller, Get, Header, Headers, Inject, NotFoundException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../common/auth/auth.decorators.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from './metrics.js';
import { MetricsAccess } from './metrics-access.js';
import { Registry } from 'prom-client';

// GET /metrics on the service's own port, when METRICS_TOKEN is set and no METRICS_PORT is: public to the
// tenant guard (no API key, so no tenant rate limit either), guarded by the metrics token instead.
// Otherwise it answers 404 exactly like an unknown route.
@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  private readonly access: MetricsAccess | null;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.access = config.metrics.token !== null && config.metrics.port === null ? new MetricsAccess(config.metrics.token) : null;
  }

  @Public('Scraped with METRICS_TOKEN, checked by the handler rather than the key guards')
  @Get()
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  async scrape(@Headers('authorization') authorization: string | undefined): Promise<string> {
    if (this.access === null) throw new NotFoundException('Cannot GET /metrics');
    const refusal = this.access.refusal(authorization);
    if (refusal) throw refusal;
    return this.metrics.render();
  }
}
