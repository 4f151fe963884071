import { Injectable } from '@nestjs/common';
import { filter, map, merge, type Observable, Subject, interval } from 'rxjs';

// tool.pending: parked for approval; tool.denied: denied or expired (never ran); tool.result: an approved call finished.
export type ToolEventType = 'tool.started' | 'tool.completed' | 'tool.error' | 'tool.pending' | 'tool.denied' | 'tool.result';

export interface ToolEvent {
  type: ToolEventType;
  tenantId: string;
  projectId: string;
  invocationId: string;
  tool: string;
  channel: string;
  status?: string;
  error?: { code: string; message: string };
  durationMs?: number;
  at: string;
}

export interface ServerSentEvent {
  type: string;
  data: object;
  id?: string;
}

// Keeps idle proxies from closing a quiet stream.
const HEARTBEAT_MS = 15_000;

// In-process event bus: every invocation's start, completion and failure, streamed per project, so a
// dashboard sees each failure even when the calling client has gone.
@Injectable()
export class ToolEvents {
  private readonly subject = new Subject<ToolEvent>();

  emit(event: Omit<ToolEvent, 'at'>): void {
    // Nobody is streaming (the usual case): nothing to build.
    if (!this.subject.observed) return;
    this.subject.next({ ...event, at: new Date().toISOString() });
  }

  stream(tenantId: string, projectId: string): Observable<ServerSentEvent> {
    const events = this.subject.pipe(
      filter((e) => e.tenantId === tenantId && e.projectId === projectId),
      map(({ tenantId: _t, ...event }): ServerSentEvent => ({ type: event.type, id: event.invocationId, data: event })),
    );
    const heartbeat = interval(HEARTBEAT_MS).pipe(map((): ServerSentEvent => ({ type: 'heartbeat', data: {} })));
    return merge(events, heartbeat);
  }
}
