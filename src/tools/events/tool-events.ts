import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { concat, filter, from, interval, map, merge, Observable, Subject } from 'rxjs';
import { busTopic, ChangeBus } from '../../common/bus/change-bus.js';

// tool.pending: parked for approval; tool.denied: denied or expired (never ran); tool.result: an approved call finished.
export type ToolEventType = 'tool.started' | 'tool.completed' | 'tool.error' | 'tool.pending' | 'tool.denied' | 'tool.result';

export type ToolEvent = CallEvent | DefinitionChangedEvent;

// An MCP source answered a definition other than the reviewed one (src/skills/review), sent to each project
// the skill is enabled on: the pinned definition is still served (withheld: the tool is not) until an admin decides.
export interface DefinitionChangedEvent {
  type: 'tool.definition_changed';
  tenantId: string;
  projectId: string;
  tool: string;
  skillId: string;
  changeId: string;
  kind: 'added' | 'changed' | 'removed';
  incompatible: boolean;
  withheld: boolean;
  // The description rules the new definition raised.
  flags: string[];
  at: string;
}

export interface CallEvent {
  type: ToolEventType;
  tenantId: string;
  projectId: string;
  invocationId: string;
  tool: string;
  channel: string;
  status?: string;
  error?: { code: string; message: string };
  durationMs?: number;
  // tool.result, tool.denied of a decided call: the key that decided it.
  decidedBy?: { keyId: string; name: string };
  // The key that made the call, as its audit row names it.
  caller: { keyId: string; name: string | null } | null;
  at: string;
  // Set when the error message, the tool name or the caller name was cut to fit the bus; the audit row has them whole.
  truncated?: true;
}

export interface ServerSentEvent {
  type: string;
  data: object;
  id?: string;
}

type StampedEvent = ToolEvent & { id: string };
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

interface StreamInterest {
  tenantId: string;
  projectId: string;
}

// Keeps idle proxies from closing a quiet stream.
const HEARTBEAT_MS = 15_000;
// Events kept per streamed project for Last-Event-ID resume.
const RESUME_BUFFER_EVENTS = 500;
// An instance with a stream open on a project says so this often; the others publish that project's events
// for INTEREST_TTL_MS after the last word. After its last stream closes, an instance keeps saying so for
// RESUME_GRACE_MS, so a client that reconnects (to any instance) resumes without a gap.
const INTEREST_REFRESH_MS = 20_000;
const INTEREST_TTL_MS = 60_000;
const RESUME_GRACE_MS = 60_000;
// Cut to these sizes, every event fits one NOTIFY with room to spare.
const MAX_ERROR_MESSAGE_CHARS = 1_000;
const MAX_TOOL_NAME_CHARS = 200;
// Key names are short; a token of an external issuer is named after claims of any length.
const MAX_CALLER_NAME_CHARS = 200;

const TOOL_EVENT = busTopic<StampedEvent>('tool.event', { ordered: true });
const STREAM_INTEREST = busTopic<StreamInterest>('tool.event-interest');

// Every invocation's start, completion and failure, streamed per project, so a dashboard sees each failure
// even when the calling client has gone, whichever instance ran the call. Events go through the change bus
// only for projects someone streams (anywhere); on PostgreSQL every instance receives them in one order.
@Injectable()
export class ToolEvents implements OnModuleDestroy {
  private readonly subject = new Subject<StampedEvent>();
  // Projects someone streams, by `tenant:project`, until when (this instance's streams included).
  private readonly interest = new Map<string, number>();
  // Open streams on this instance per project, and until when a closed one's resume grace lasts.
  private readonly localStreams = new Map<string, { open: number; graceUntil: number }>();
  private readonly buffers = new Map<string, StampedEvent[]>();
  private readonly refreshTimer: NodeJS.Timeout;
  private sequence = 0;

  constructor(private readonly bus: ChangeBus) {
    bus.subscribe(STREAM_INTEREST, ({ tenantId, projectId }) => this.interest.set(key(tenantId, projectId), Date.now() + INTEREST_TTL_MS));
    bus.subscribe(TOOL_EVENT, (event) => this.received(event));
    // Interest announced while the bus was down never reached the others.
    bus.onResync(() => this.announce());
    this.refreshTimer = setInterval(() => this.announce(), INTEREST_REFRESH_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.refreshTimer);
  }

  // Whether anyone streams the project (see emit): a caller may skip building an event nobody wants.
  watched(tenantId: string, projectId: string): boolean {
    return this.interest.size > 0 && this.interest.has(key(tenantId, projectId));
  }

  emit(event: DistributiveOmit<ToolEvent, 'at'>): void {
    // Nobody streams this project on any instance (the usual case): nothing to build.
    const expiresAt = this.interest.get(key(event.tenantId, event.projectId));
    if (expiresAt === undefined) return;
    if (expiresAt < Date.now()) {
      this.forget(key(event.tenantId, event.projectId));
      return;
    }
    this.bus.publish(TOOL_EVENT, fitted({ ...event, at: new Date().toISOString(), id: this.nextId() }));
  }

  // `lastEventId`: the id of the last event the client saw; what this instance holds after it is sent first.
  stream(tenantId: string, projectId: string, lastEventId?: string): Observable<ServerSentEvent> {
    const k = key(tenantId, projectId);
    const events = new Observable<StampedEvent>((subscriber) => {
      this.opened(k, tenantId, projectId);
      const replay = lastEventId === undefined ? [] : after(this.buffers.get(k) ?? [], lastEventId);
      // The replay is taken and the live events subscribed in the same turn, so nothing falls between.
      const subscription = concat(
        from(replay),
        this.subject.pipe(filter((e) => e.tenantId === tenantId && e.projectId === projectId)),
      ).subscribe(subscriber);
      return () => {
        subscription.unsubscribe();
        this.closed(k);
      };
    });
    const heartbeat = interval(HEARTBEAT_MS).pipe(map((): ServerSentEvent => ({ type: 'heartbeat', data: {} })));
    return merge(events.pipe(map(({ tenantId: _t, id, ...event }): ServerSentEvent => ({ type: event.type, id, data: event }))), heartbeat);
  }

  // Unique across instances (the instance's bus id and its own counter) and ordered by time first, so an
  // instance that does not hold the id itself can still send what came after it.
  private nextId(): string {
    return `${Date.now().toString(36)}-${this.bus.instanceId}-${(++this.sequence).toString(36)}`;
  }

  private received(event: StampedEvent): void {
    const k = key(event.tenantId, event.projectId);
    if (!this.interest.has(k)) return;
    let buffer = this.buffers.get(k);
    if (!buffer) this.buffers.set(k, (buffer = []));
    buffer.push(event);
    if (buffer.length > RESUME_BUFFER_EVENTS) buffer.splice(0, buffer.length - RESUME_BUFFER_EVENTS);
    this.subject.next(event);
  }

  private opened(k: string, tenantId: string, projectId: string): void {
    const local = this.localStreams.get(k) ?? { open: 0, graceUntil: 0 };
    local.open++;
    this.localStreams.set(k, local);
    this.bus.publish(STREAM_INTEREST, { tenantId, projectId });
  }

  private closed(k: string): void {
    const local = this.localStreams.get(k);
    if (!local) return;
    local.open--;
    if (local.open === 0) local.graceUntil = Date.now() + RESUME_GRACE_MS;
  }

  private announce(): void {
    const now = Date.now();
    for (const [k, local] of this.localStreams) {
      if (local.open === 0 && local.graceUntil < now) {
        this.localStreams.delete(k);
        continue;
      }
      const [tenantId, projectId] = k.split(':') as [string, string];
      this.bus.publish(STREAM_INTEREST, { tenantId, projectId });
    }
    for (const [k, until] of this.interest) if (until < now) this.forget(k);
  }

  private forget(k: string): void {
    this.interest.delete(k);
    this.buffers.delete(k);
  }
}

const key = (tenantId: string, projectId: string) => `${tenantId}:${projectId}`;

// The events after `lastEventId`: by position when this instance holds it, else by the time in the id.
function after(buffer: StampedEvent[], lastEventId: string): StampedEvent[] {
  const index = buffer.findIndex((e) => e.id === lastEventId);
  if (index !== -1) return buffer.slice(index + 1);
  const time = parseInt(lastEventId.split('-')[0] ?? '', 36);
  if (!Number.isFinite(time)) return buffer.slice();
  return buffer.filter((e) => parseInt(e.id.split('-')[0], 36) > time);
}

// A tool name taken from the URL, an error message or a caller's name of any length would not fit a NOTIFY:
// each is cut, and `truncated` tells the client to read the whole text from the audit row (by invocationId).
function fitted(event: StampedEvent): StampedEvent {
  if (event.type === 'tool.definition_changed') return event;
  const longError = event.error !== undefined && event.error.message.length > MAX_ERROR_MESSAGE_CHARS;
  const longTool = event.tool.length > MAX_TOOL_NAME_CHARS;
  const caller = event.caller;
  const longCaller = caller != null && caller.name !== null && caller.name.length > MAX_CALLER_NAME_CHARS;
  if (!longError && !longTool && !longCaller) return event;
  return {
    ...event,
    tool: longTool ? `${event.tool.slice(0, MAX_TOOL_NAME_CHARS)}…` : event.tool,
    ...(longCaller ? { caller: { keyId: caller.keyId, name: `${caller.name!.slice(0, MAX_CALLER_NAME_CHARS)}…` } } : {}),
    ...(longError ? { error: { code: event.error!.code, message: `${event.error!.message.slice(0, MAX_ERROR_MESSAGE_CHARS)}…` } } : {}),
    truncated: true,
  };
}
