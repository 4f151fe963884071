import { waitForProcess as waitForProcessesWith } from '../../support/processes.js';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Response } from 'supertest';
import type { TestApp, TestTenant } from '../../support/test-app.js';

// Shared by the skill suites: building and registering skills, calling their tools, a real HTTP endpoint
// that records what it receives, and watching the processes a command executor starts.

export interface SkillToolBody {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  executor: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  timeoutMs?: number;
  mode?: 'async' | 'sync';
  annotations?: Record<string, boolean>;
}

export interface SkillBody {
  name: string;
  version: string;
  description: string;
  tools: SkillToolBody[];
}

export interface RegisteredSkill {
  id: string;
  name: string;
  version: string;
  signingSecret: string;
  tools: SkillToolBody[];
}

let skillCounter = 0;
export const uniqueName = (prefix: string) => `${prefix}-${process.pid}-${++skillCounter}`;

export const STRING_ARG = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { [name]: { type: 'string', ...extra } },
  required: [name],
  additionalProperties: false,
});

export const commandTool = (
  name: string,
  argv: string[],
  inputSchema: Record<string, unknown>,
  extra: Partial<SkillToolBody> = {},
): SkillToolBody => ({
  name,
  description: `Runs ${argv[0]} for the test suite`,
  inputSchema,
  executor: { type: 'command', argv },
  ...extra,
});

export const httpTool = (
  name: string,
  url: string,
  inputSchema: Record<string, unknown>,
  extra: Partial<SkillToolBody> = {},
): SkillToolBody => ({
  name,
  description: `Posts its arguments to ${url}`,
  inputSchema,
  executor: { type: 'http', url },
  ...extra,
});

export const skillOf = (tools: SkillToolBody[], overrides: Partial<SkillBody> = {}): SkillBody => ({
  name: uniqueName('skill'),
  version: '1.0.0',
  description: 'A skill registered by the test suite',
  tools,
  ...overrides,
});

export function postSkill(t: TestApp, tenant: TestTenant, body: unknown) {
  return t.http
    .post('/v1/skills')
    .set(tenant.auth)
    .send(body as object);
}

export async function registerSkill(t: TestApp, tenant: TestTenant, body: SkillBody): Promise<RegisteredSkill> {
  const res = await postSkill(t, tenant, body);
  expect({ status: res.status, body: res.status === 201 ? 'created' : res.body }).toEqual({ status: 201, body: 'created' });
  return res.body as RegisteredSkill;
}

export function enableSkill(t: TestApp, tenant: TestTenant, projectId: string, skillId: string) {
  return t.http.post(`/v1/projects/${projectId}/skills`).set(tenant.auth).send({ skillId });
}

// Registers the skill and enables it on the project; answers the registration.
export async function installSkill(t: TestApp, tenant: TestTenant, projectId: string, body: SkillBody): Promise<RegisteredSkill> {
  const skill = await registerSkill(t, tenant, body);
  const enabled = await enableSkill(t, tenant, projectId, skill.id);
  expect({ status: enabled.status, body: enabled.status === 201 ? 'enabled' : enabled.body }).toEqual({ status: 201, body: 'enabled' });
  return skill;
}

export function callTool(
  t: TestApp,
  tenant: TestTenant,
  projectId: string,
  tool: string,
  args: unknown,
  extra: Record<string, unknown> = {},
) {
  return t.http
    .post(`/v1/projects/${projectId}/tools/${tool}/invoke`)
    .set(tenant.auth)
    .send({ arguments: args, ...extra });
}

export async function listSkills(t: TestApp, tenant: TestTenant): Promise<Array<{ id: string; name: string; version: string }>> {
  const all: Array<{ id: string; name: string; version: string }> = [];
  let cursor: string | null = null;
  do {
    const res = await t.http
      .get('/v1/skills')
      .query({ limit: 100, ...(cursor ? { cursor } : {}) })
      .set(tenant.auth)
      .expect(200);
    all.push(...(res.body.items as typeof all));
    cursor = res.body.nextCursor as string | null;
  } while (cursor);
  return all;
}

export async function toolNames(t: TestApp, tenant: TestTenant, projectId: string): Promise<string[]> {
  const res = await t.http.get(`/v1/projects/${projectId}/tools`).set(tenant.auth).expect(200);
  return (res.body.tools as Array<{ name: string }>).map((tool) => tool.name);
}

// The answer's status and error, so a failed expectation shows what the service said.
export const outcome = (res: Response) => ({ status: res.status, code: (res.body?.error?.code as string | undefined) ?? null });

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
  requestId: string;
}

// A refusal in the one error shape; answers the error object.
export function expectError(res: Response, status: number, code: string): ErrorBody['error'] {
  expect({ status: res.status, code: res.body?.error?.code, body: res.status === status ? '' : res.body }).toEqual({
    status,
    code,
    body: '',
  });
  expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }), requestId: expect.any(String) });
  // No stack trace or source path reaches the client.
  expect(res.text).not.toMatch(/node_modules|\.(?:ts|js):\d+:\d+|\\n\s*at /);
  return (res.body as ErrorBody).error;
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  // Set when the caller closed the connection before the answer was sent.
  abandoned: boolean;
}

export interface Reply {
  status?: number;
  contentType?: string;
  body: string;
  delayMs?: number;
}

// A real endpoint on 127.0.0.1: records every request it receives and answers by path.
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly replies = new Map<string, (req: ReceivedRequest) => Reply>();
  private readonly server: http.Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  port = 0;

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const received: ReceivedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          abandoned: false,
        };
        this.requests.push(received);
        res.once('close', () => {
          if (!res.writableFinished) received.abandoned = true;
        });
        const path = (req.url ?? '/').split('?')[0];
        const reply = this.replies.get(path)?.(received) ?? { status: 404, contentType: 'text/plain', body: `nothing at ${path}` };
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
          res.end(reply.body);
        };
        if (reply.delayMs) this.timers.add(setTimeout(send, reply.delayMs));
        else send();
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string, reply: (req: ReceivedRequest) => Reply): void {
    this.replies.set(path, reply);
  }

  to(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.url.split('?')[0] === path);
  }

  close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// What a receiver does to tell a genuine call: recompute the HMAC of the raw body with the skill's secret.
export function signatureIsValid(secret: string, rawBody: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(header.slice('sha256='.length));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export { expectNoProcess, processesWith } from '../../support/processes.js';

export async function waitForProcess(marker: string): Promise<number> {
  return (await waitForProcessesWith(marker))[0];
}
