import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { connectMcp, textOf, type TextResult } from '../e2e/mcp/mcp-test-kit.js';
import { eventually } from '../support/eventually.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md 120-121: a parked call is announced to the project's approval routes (signed per Standard
// Webhooks, or as a Slack message), durably and with retries, without ever sending its arguments; and an
// approval may name the arguments' digest, so what runs is what the approver saw.

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

type Auth = { Authorization: string };

// The arguments as the service digests them: JSON with object keys sorted at every level.
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(',')}]`
    : typeof value === 'object' && value !== null
      ? `{${Object.keys(value)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(value);
const digestOf = (args: unknown) => createHash('sha256').update(canonical(args)).digest('hex');

// A value shaped like a credential: it must never leave through a route.
const SECRET_VALUE = 'ghp_' + 'Z'.repeat(36);
const PUBLIC_URL = 'https://toolgate.example.com';

describe('approval routes', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let approver: Auth;
  let receiver: http.Server;
  let port: number;
  const received: Received[] = [];
  // Requests to /hang* are held open here until the suite ends.
  const held: http.ServerResponse[] = [];
  let flakyFailures = 0;
  let closing = false;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        received.push({ path: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') });
        if (closing) return void res.destroy();
        if (req.url?.startsWith('/hang')) return void held.push(res);
        if (req.url?.startsWith('/flaky') && flakyFailures < 2) {
          flakyFailures++;
          res.writeHead(500).end('not now');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
    // The receiver is on loopback, which the fetch_url rules refuse unless the operator opens it (as the
    // fetch_url suite does); quick retries and a short bound keep the suite fast.
    t = await createTestApp({
      env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${port}`, APPROVAL_DELIVERY_RETRY_MS: '200', APPROVAL_DELIVERY_TIMEOUT_MS: '1500', PUBLIC_URL },
    });
    tenant = await t.createTenant();
    const key = await t.http.post('/v1/api-keys').set(tenant.auth).send({ name: 'reviewer', role: 'approver' }).expect(201);
    approver = { Authorization: `Bearer ${key.body.key as string}` };
  });
  afterAll(async () => {
    closing = true;
    for (const res of held) res.destroy();
    await t.close();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  const createRoute = (projectId: string, body: Record<string, unknown>, auth: Auth = tenant.auth) =>
    t.http.post(`/v1/projects/${projectId}/approval-routes`).set(auth).send(body);
  const invoke = (projectId: string, tool: string, args: Record<string, unknown>) =>
    t.http.post(`/v1/projects/${projectId}/tools/${tool}/invoke`).set(tenant.auth).send({ arguments: args });
  const eventsAt = (prefix: string) => received.filter((r) => r.path.startsWith(prefix));
  // The events a receiver got for one call, each verified with the package's own verify under the route's secret.
  const verifiedEvents = (prefix: string, secret: string, invocationId: string) =>
    eventsAt(prefix)
      .map((r) => new Webhook(secret).verify(r.body, r.headers) as { type: string; timestamp: string; data: Record<string, unknown> })
      .filter((event) => event.data.invocationId === invocationId);
  const deliveriesOf = async (projectId: string, routeId: string) =>
    (await t.http.get(`/v1/projects/${projectId}/approval-routes/${routeId}/deliveries`).set(tenant.auth).expect(200)).body.items as Array<
      Record<string, unknown>
    >;

  describe('[sec-120] parked calls are announced, signed, retried, and never with their arguments', () => {
    let p: string;
    let secret: string;
    let routeId: string;
    let slackRouteId: string;

    beforeAll(async () => {
      p = (await t.createProject(tenant, { approvalRequired: ['write_file'] })).id;
      const created = await createRoute(p, { kind: 'webhook', url: `http://127.0.0.1:${port}/ok/main` }).expect(201);
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
      secret = created.body.secret as string;
      routeId = created.body.id as string;
      slackRouteId = (await createRoute(p, { kind: 'slack', url: `http://127.0.0.1:${port}/slack/T000/B000/xyz` }).expect(201)).body
        .id as string;
    });

    it('refuses a URL that is not http(s), or an address the fetch_url rules refuse, with a 422 that says why', async () => {
      const other = port === 65535 ? port - 1 : port + 1;
      for (const url of [
        'ftp://127.0.0.1/x',
        'not a url',
        `http://127.0.0.1:${other}/`,
        'http://[::1]/',
        'http://10.0.0.7/',
        'http://169.254.169.254/latest/meta-data',
        'http://localhost./',
      ]) {
        const res = await createRoute(p, { kind: 'webhook', url });
        expect({ url, status: res.status, code: res.body.error?.code }).toEqual({ url, status: 422, code: 'approval_route_url_refused' });
        expect(res.body.error.message).toMatch(/^The approval route's URL was refused: ./);
      }
      const badSecret = await createRoute(p, { kind: 'webhook', url: `http://127.0.0.1:${port}/ok/x`, secret: 'hunter2' });
      expect([badSecret.status, badSecret.body.error.code]).toEqual([422, 'approval_route_secret_refused']);
      const agent = await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ name: 'bot', role: 'agent', projectIds: [p] })
        .expect(201);
      const byAgent = await createRoute(
        p,
        { kind: 'webhook', url: `http://127.0.0.1:${port}/ok/x` },
        { Authorization: `Bearer ${agent.body.key as string}` },
      );
      expect([byAgent.status, byAgent.body.error.code]).toEqual([403, 'forbidden_for_role']);
    });

    it('never shows a secret again: the list has none, and a Slack URL shows only its origin', async () => {
      const listed = await t.http.get(`/v1/projects/${p}/approval-routes`).set(tenant.auth).expect(200);
      expect(JSON.stringify(listed.body)).not.toContain(secret.slice(6));
      expect(JSON.stringify(listed.body)).not.toContain('/slack/T000');
      expect(listed.body.items.map((r: Record<string, unknown>) => [r.kind, r.signed])).toEqual([
        ['webhook', true],
        ['slack', false],
      ]);
      const stored = await t.database.driver.query<{ secret: string }>(`SELECT secret FROM approval_routes WHERE id = $1`, [routeId]);
      expect(stored[0].secret).toMatch(/^tgenc:v1:/);
      // A Slack URL is the credential itself: it rests sealed too, and the row keeps only its origin.
      const slackRow = await t.database.driver.query<{ url: string; secret: string }>(
        `SELECT url, secret FROM approval_routes WHERE id = $1`,
        [slackRouteId],
      );
      expect(slackRow[0].url).toBe(`http://127.0.0.1:${port}/…`);
      expect(slackRow[0].secret).toMatch(/^tgenc:v1:/);
      expect(JSON.stringify(slackRow)).not.toContain('B000/xyz');
    });

    it('sends approval.requested then approval.decided for a REST call, signed and without its arguments', async () => {
      const args = { path: 'rest.txt', content: `token ${SECRET_VALUE}` };
      const parked = await invoke(p, 'write_file', args).expect(202);
      const id = parked.body.invocationId as string;
      const [requested] = await eventually(() => {
        const events = verifiedEvents('/ok/main', secret, id);
        expect(events.map((e) => e.type)).toEqual(['approval.requested']);
        return events;
      });
      expect(requested.data).toEqual({
        invocationId: id,
        projectId: p,
        tool: 'write_file',
        requestedBy: { keyId: expect.any(String), keyName: 'default' },
        argumentsDigest: digestOf(args),
        expiresAt: parked.body.expiresAt,
        approvalUrl: `${PUBLIC_URL}/console/projects/${p}/approvals#call-${id}`,
      });
      const sent = eventsAt('/ok/main').find((r) => r.body.includes(id))!;
      expect(sent.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number(sent.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
      // A forged signature is refused by the same verify.
      expect(() => new Webhook(secret).verify(sent.body.replace('write_file', 'read_file'), sent.headers)).toThrow();

      const decision = await t.http.post(`/v1/projects/${p}/invocations/${id}/approve`).set(approver).send({}).expect(200);
      expect(decision.body.outcome.status).toBe('ok');
      const decided = await eventually(() => {
        const events = verifiedEvents('/ok/main', secret, id);
        expect(events.map((e) => e.type)).toEqual(['approval.requested', 'approval.decided']);
        return events[1];
      });
      expect(decided.data).toMatchObject({ decision: 'approved', decidedBy: { keyName: 'reviewer' }, argumentsDigest: digestOf(args) });
      // The Slack route got the same two, as Block Kit messages with the digest and a button to the page.
      const slack = await eventually(() => {
        const bodies = eventsAt('/slack/').map((r) => JSON.parse(r.body) as { text: string; blocks: Array<Record<string, unknown>> });
        const mine = bodies.filter((b) => JSON.stringify(b).includes(id));
        expect(mine).toHaveLength(2);
        return mine;
      });
      const [ask] = slack;
      expect(ask.text).toContain('write_file');
      expect(ask.blocks[0]).toMatchObject({ type: 'section', text: { type: 'mrkdwn' } });
      expect(JSON.stringify(ask.blocks[0])).toContain(digestOf(args));
      expect(JSON.stringify(ask.blocks[0])).toContain('default');
      expect(ask.blocks.find((b) => b.type === 'actions')).toEqual({
        type: 'actions',
        elements: [expect.objectContaining({ type: 'button', url: `${PUBLIC_URL}/console/projects/${p}/approvals#call-${id}` })],
      });
      expect(slack[1].text).toMatch(/was approved/);
      const slackDeliveries = await eventually(async () => {
        const rows = await deliveriesOf(p, slackRouteId);
        expect(rows.filter((d) => d.invocationId === id).map((d) => d.status)).toEqual(['delivered', 'delivered']);
        return rows;
      });
      expect(slackDeliveries[0].lastStatusCode).toBe(200);
    });

    it('announces a batch call, then its denial', async () => {
      const batch = await t.http
        .post(`/v1/projects/${p}/tools/batch`)
        .set(tenant.auth)
        .send({ calls: [{ id: 'w', tool: 'write_file', arguments: { path: 'batch.txt', content: SECRET_VALUE } }] })
        .expect(200);
      const id = batch.body.results[0].invocationId as string;
      expect(batch.body.results[0].status).toBe('pending_approval');
      await eventually(() => expect(verifiedEvents('/ok/main', secret, id).map((e) => e.type)).toEqual(['approval.requested']));
      await t.http.post(`/v1/projects/${p}/invocations/${id}/deny`).set(approver).send({ reason: 'not today' }).expect(200);
      const events = await eventually(() => {
        const all = verifiedEvents('/ok/main', secret, id);
        expect(all.map((e) => e.type)).toEqual(['approval.requested', 'approval.decided']);
        return all;
      });
      expect(events[1].data).toMatchObject({ decision: 'denied', reason: 'not today', decidedBy: { keyName: 'reviewer' } });
    });

    it('announces a call an MCP client (the official SDK) made, parked by a Cedar @ask policy, and its approval', async () => {
      const q = (await t.createProject(tenant)).id;
      await t.http
        .put(`/v1/projects/${q}/policies`)
        .set(tenant.auth)
        .send({
          text: '@id("ask-writes") @ask("a person checks writes") permit (principal, action, resource == Toolgate::Tool::"write_file");',
        })
        .expect(200);
      const route = await createRoute(q, { kind: 'webhook', url: `http://127.0.0.1:${port}/ok/mcp` }).expect(201);
      const client = await connectMcp(t, q, tenant.auth);
      try {
        const result = (await client.callTool({ name: 'write_file', arguments: { path: 'mcp.txt', content: SECRET_VALUE } })) as TextResult;
        const id = /invocation ([0-9a-f-]{36})/.exec(textOf(result))?.[1];
        expect(id).toBeDefined();
        await eventually(() =>
          expect(verifiedEvents('/ok/mcp', route.body.secret as string, id!).map((e) => e.type)).toEqual(['approval.requested']),
        );
        expect(existsSync(path.join(t.workspaceOf(q), 'mcp.txt'))).toBe(false);
        await t.http.post(`/v1/projects/${q}/invocations/${id}/approve`).set(approver).send({}).expect(200);
        await eventually(() =>
          expect(verifiedEvents('/ok/mcp', route.body.secret as string, id!).map((e) => [e.type, e.data.decision])).toEqual([
            ['approval.requested', undefined],
            ['approval.decided', 'approved'],
          ]),
        );
        expect(existsSync(path.join(t.workspaceOf(q), 'mcp.txt'))).toBe(true);
      } finally {
        await client.close();
      }
    });

    it('retries a receiver that answers 500 twice, under the same webhook-id, until it is delivered', async () => {
      const f = (await t.createProject(tenant, { approvalRequired: ['write_file'] })).id;
      const route = await createRoute(f, { kind: 'webhook', url: `http://127.0.0.1:${port}/flaky` }).expect(201);
      const id = (await invoke(f, 'write_file', { path: 'f.txt', content: 'x' }).expect(202)).body.invocationId as string;
      const [delivery] = await eventually(
        async () => {
          const rows = await deliveriesOf(f, route.body.id as string);
          expect(rows.map((d) => [d.eventType, d.status, d.attempts, d.lastStatusCode])).toEqual([
            ['approval.requested', 'delivered', 3, 200],
          ]);
          return rows;
        },
        60,
        100,
      );
      const sends = eventsAt('/flaky');
      expect(sends.map((r) => r.headers['webhook-id'])).toEqual([delivery.id, delivery.id, delivery.id]);
      for (const r of sends)
        expect(
          (new Webhook(route.body.secret as string).verify(r.body, r.headers) as { data: { invocationId: string } }).data.invocationId,
        ).toBe(id);
    });

    it('neither a hanging receiver holds up the call nor the decision, and its delivery is retried after the bound', async () => {
      const h = (await t.createProject(tenant, { approvalRequired: ['write_file'] })).id;
      const route = await createRoute(h, { kind: 'webhook', url: `http://127.0.0.1:${port}/hang` }).expect(201);
      const first = (await invoke(h, 'write_file', { path: 'a.txt', content: 'a' }).expect(202)).body.invocationId as string;
      // The receiver holds the announcement open ...
      await eventually(() => expect(held.length).toBeGreaterThanOrEqual(1));
      // ... while another call parks, and the first is approved and runs.
      const second = await invoke(h, 'write_file', { path: 'b.txt', content: 'b' }).expect(202);
      expect(second.body.status).toBe('pending_approval');
      const approved = await t.http.post(`/v1/projects/${h}/invocations/${first}/approve`).set(approver).send({}).expect(200);
      expect(approved.body.outcome.status).toBe('ok');
      expect(held.some((res) => !res.writableEnded)).toBe(true);
      // The held send times out (APPROVAL_DELIVERY_TIMEOUT_MS) and waits for its next attempt; the call is safe.
      await eventually(
        async () => {
          const rows = await deliveriesOf(h, route.body.id as string);
          const announced = rows.find((d) => d.invocationId === first && d.eventType === 'approval.requested')!;
          expect(announced.status).toBe('pending');
          expect(announced.attempts).toBeGreaterThanOrEqual(1);
          expect(String(announced.lastError)).toMatch(/^No response from .*\/hang within 1500 ms/);
        },
        80,
        100,
      );
      const row = await t.http
        .get(`/v1/projects/${h}/invocations/${second.body.invocationId as string}`)
        .set(tenant.auth)
        .expect(200);
      expect(row.body.approval.status).toBe('pending');
    });

    it('sends no argument in any delivery: neither to the receivers nor in the stored payloads', async () => {
      expect(received.length).toBeGreaterThan(5);
      for (const r of received) expect(r.body).not.toContain(SECRET_VALUE);
      for (const r of received) expect(r.body).not.toContain('"content"');
      const stored = await t.database.driver.query<{ payload: unknown }>(`SELECT payload FROM approval_deliveries`);
      expect(stored.length).toBeGreaterThan(5);
      for (const row of stored) expect(JSON.stringify(row.payload)).not.toContain(SECRET_VALUE);
    });

    it('caps the routes of a project, and deletes a route with its deliveries', async () => {
      const c = (await t.createProject(tenant)).id;
      const ids: string[] = [];
      for (let i = 0; i < 10; i++)
        ids.push((await createRoute(c, { kind: 'webhook', url: `http://127.0.0.1:${port}/ok/cap${i}` }).expect(201)).body.id as string);
      const over = await createRoute(c, { kind: 'webhook', url: `http://127.0.0.1:${port}/ok/cap10` });
      expect([over.status, over.body.error.code]).toEqual([409, 'approval_route_limit']);
      await t.http.delete(`/v1/projects/${c}/approval-routes/${ids[0]}`).set(tenant.auth).expect(204);
      await t.http.delete(`/v1/projects/${c}/approval-routes/${ids[0]}`).set(tenant.auth).expect(404);
      await t.http.get(`/v1/projects/${c}/approval-routes/${ids[0]}/deliveries`).set(tenant.auth).expect(404);
      await createRoute(c, { kind: 'webhook', url: `http://127.0.0.1:${port}/ok/cap10` }).expect(201);

      // Created all at once, the routes still stop at the cap: each creation counts after the one before.
      const burst = (await t.createProject(tenant)).id;
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) => createRoute(burst, { kind: 'webhook', url: `http://127.0.0.1:${port}/ok/burst${i}` })),
      );
      expect(answers.filter((r) => r.status === 201)).toHaveLength(10);
      expect(answers.filter((r) => r.status === 409 && r.body.error.code === 'approval_route_limit')).toHaveLength(6);
      const kept = await t.http.get(`/v1/projects/${burst}/approval-routes`).set(tenant.auth).expect(200);
      expect(kept.body.items).toHaveLength(10);
    });
  });

  describe('[sec-121] an approval bound to the arguments digest', () => {
    let p: string;

    beforeAll(async () => {
      p = (await t.createProject(tenant, { approvalRequired: ['write_file'] })).id;
    });

    it('refuses an approval naming another digest with 409, runs nothing, and runs on the matching digest', async () => {
      const args = { content: 'bound', path: 'bound.txt' };
      const id = (await invoke(p, 'write_file', args).expect(202)).body.invocationId as string;
      const shown = await t.http.get(`/v1/projects/${p}/invocations/${id}`).set(approver).expect(200);
      expect(shown.body.approval.argumentsDigest).toBe(digestOf(args));
      expect(shown.body.approval.pendingArguments).toEqual(args);

      const wrong = await t.http
        .post(`/v1/projects/${p}/invocations/${id}/approve`)
        .set(approver)
        .send({ argumentsDigest: digestOf({ ...args, path: 'other.txt' }) });
      expect([wrong.status, wrong.body.error.code]).toEqual([409, 'approval_arguments_changed']);
      expect(existsSync(path.join(t.workspaceOf(p), 'bound.txt'))).toBe(false);
      const after = await t.http.get(`/v1/projects/${p}/invocations/${id}`).set(tenant.auth).expect(200);
      expect([after.body.status, after.body.approval.status, after.body.decidedBy ?? null]).toEqual(['pending_approval', 'pending', null]);
      const log = await t.http.get(`/v1/projects/${p}/invocations`).set(tenant.auth).expect(200);
      expect(log.body.items.filter((row: { id: string }) => row.id === id).map((row: { status: string }) => row.status)).toEqual([
        'pending_approval',
      ]);
      const malformed = await t.http.post(`/v1/projects/${p}/invocations/${id}/approve`).set(approver).send({ argumentsDigest: 'abc' });
      expect(malformed.status).toBe(400);

      const ok = await t.http
        .post(`/v1/projects/${p}/invocations/${id}/approve`)
        .set(approver)
        .send({ argumentsDigest: digestOf(args) })
        .expect(200);
      expect(ok.body.outcome.status).toBe('ok');
      expect(existsSync(path.join(t.workspaceOf(p), 'bound.txt'))).toBe(true);
      const decided = await t.http.get(`/v1/projects/${p}/invocations/${id}`).set(tenant.auth).expect(200);
      expect([decided.body.status, decided.body.approval.argumentsDigest]).toEqual(['ok', digestOf(args)]);
    });
  });
});
