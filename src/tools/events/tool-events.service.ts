import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ToolRegistry } from '../tool-registry.js';
import { type ServerSentEvent, ToolEvents } from './tool-events.js';

@Injectable()
export class ToolEventsService {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly events: ToolEvents,
  ) {}

  // The project is checked first, so another tenant's id is a 404 rather than a silent empty stream.
  async stream(tenantId: string, projectId: string, lastEventId?: string): Promise<Observable<ServerSentEvent>> {
    await this.registry.forProject(tenantId, projectId);
    return this.events.stream(tenantId, projectId, lastEventId);
  }
}
