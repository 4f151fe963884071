import http from 'node:http';
import type { TestApp, TestTenant } from '../../support/test-app.js';

// Shared pieces of the tool e2e suites: calling a tool, watching child processes, reading the event stream.

export const SHELL_PROJECT = { shellEnabled: true, shellAllowlist: ['echo', 'sh', 'sleep', 'cat', 'printf'] };

export function invoke(t: TestApp, tenant: TestTenant, projectId: string, tool: string, body: string | object) {
  return t.http.post(`/v1/projects/${projectId}/tools/${tool}/invoke`).set(tenant.auth).send(body);
}

export function callTool(
  t: TestApp,
  tenant: TestTenant,
  projectId: string,
  tool: string,
  args: unknown,
  options: { timeoutMs?: number } = {},
) {
  return invoke(t, tenant, projectId, tool, { arguments: args, ...options });
}

export const withoutRequestId = (text: string) => text.replace(/"requestId":"[^"]*"/, '');

export interface StreamedEvent {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

// A real server-sent-events client on node:http: every event the stream delivers, parsed, in order.
export class EventStream {
  readonly events: StreamedEvent[] = [];
  private buffer = '';
  private waiters: Array<() => void> = [];

  private constructor(private readonly request: http.ClientRequest) {}

  static open(port: number, projectId: string, tenant: TestTenant, options: { lastEventId?: string } = {}): Promise<EventStream> {
    return new Promise((resolve, reject) => {
      const request = http.get({
        host: '127.0.0.1',
        port,
        path: `/v1/projects/${projectId}/events`,
        headers: { ...tenant.auth, accept: 'text/event-stream', ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}) },
      });
      const stream = new EventStream(request);
      request.once('error', reject);
      request.once('response', (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          return reject(new Error(`event stream answered ${response.statusCode}`));
        }
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => stream.push(chunk));
        response.on('error', () => undefined);
        resolve(stream);
      });
    });
  }

  // The first event (already received or still to come) that matches.
  async next(matches: (e: StreamedEvent) => boolean, timeoutMs = 5000): Promise<StreamedEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(matches);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching event; received: ${JSON.stringify(this.events.map((e) => e.event))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.request.destroy();
  }

  private push(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
      }
      if (fields.event && fields.data) {
        this.events.push({ event: fields.event, id: fields.id, data: JSON.parse(fields.data) as Record<string, unknown> });
      }
    }
    for (const wake of this.waiters.splice(0)) wake();
  }
}
