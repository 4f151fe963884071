import { Inject, Injectable } from '@nestjs/common';
import { filter, finalize, Observable, takeUntil } from 'rxjs';
import type { Tenant } from '../../common/auth/auth.decorators.js';
import { KeyRevocations } from '../../common/auth/key-revocations.js';
import { keyMayUseTool } from '../../common/auth/key-roles.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { ToolRegistry } from '../tool-registry.js';
import { StreamSlots } from './stream-slots.js';
import { type ServerSentEvent, ToolEvents } from './tool-events.js';

@Injectable()
export class ToolEventsService {
  private readonly slots: StreamSlots;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly events: ToolEvents,
    private readonly revocations: KeyRevocations,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.slots = new StreamSlots({ maxPerTenant: config.transport.maxStreamsPerTenant, maxPerKey: config.transport.maxStreamsPerKey });
  }

  // The project is checked first, so another tenant's id is a 404 rather than a silent empty stream. The
  // stream's slot is given back when `ended` aborts (every way a stream ends, a client gone before it was
  // subscribed included) or when the stream is unsubscribed, whichever comes first.
  async stream(
    tenant: Tenant,
    projectId: string,
    lastEventId: string | undefined,
    ended: AbortSignal,
  ): Promise<Observable<ServerSentEvent>> {
    await this.registry.forProject(tenant.tenantId, projectId);
    const release = this.slots.take(tenant);
    if (ended.aborted) release();
    else ended.addEventListener('abort', release, { once: true });
    // A key revoked (here or on another instance), deleted with its tenant, or expired while its stream is
    // open is closed then: it hears nothing past its end.
    const keyEnded = new Observable<void>((subscriber) => this.revocations.untilEnded(tenant, () => subscriber.next()));
    // A key bound to tools hears of those tools' calls only, as it reads only their audit rows.
    const bound = tenant.tools;
    const events = this.events.stream(tenant.tenantId, projectId, lastEventId);
    const heard =
      bound === null ? events : events.pipe(filter((event) => !('tool' in event.data) || keyMayUseTool(bound, String(event.data.tool))));
    return heard.pipe(takeUntil(keyEnded), finalize(release));
  }
}
