import { randomBytes } from 'node:crypto';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { httpTool, installSkill, Receiver, skillOf } from '../e2e/skills/skill-test-kit.js';
import { EventStream } from '../e2e/tools/tool-test-kit.js';
import { expectRefusal, invoke } from './security-helpers.js';

// docs/security-model.md, "Audit data" (cases 62-64): a credential given to a tool reaches the tool and nothing
// else. Every channel a tenant (or an operator) can read back is searched for every secret: the listing,
// one row by id, the export, the SSE events and the service's log lines.

interface Row {
  id: string;
  tool: string;
  status: string;
  errorCode: string | null;
  errorMessage: string | null;
  arguments: unknown;
  redactedPaths: string[];
}

const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

describe('audit data: no secret at rest or on the wire', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let receiver: Receiver;
  let events: EventStream;
  const secrets: string[] = [];
  const keep = (value: string) => (secrets.push(value), value);

  const listed = async (): Promise<Row[]> => {
    const res = await t.http.get(`/v1/projects/${projectId}/invocations`).query({ limit: 100 }).set(tenant.auth).expect(200);
    return res.body.items as Row[];
  };
  const exported = async (): Promise<string> => {
    const res = await t.http
      .get(`/v1/projects/${projectId}/invocations/export`)
      .set(tenant.auth)
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (chunk: string) => (text += chunk));
        r.on('end', () => done(null, text));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    return res.body as string;
  };
  // Every channel, as one text to search.
  const everything = async () => {
    const rows = await listed();
    const byId = await Promise.all(
      rows.map(async (r) => (await t.http.get(`/v1/projects/${projectId}/invocations/${r.id}`).set(tenant.auth).expect(200)).text),
    );
    return [JSON.stringify(rows), ...byId, await exported(), JSON.stringify(events.events), JSON.stringify(t.logs)].join('\n');
  };
  const expectNoSecretIn = (text: string) => {
    for (const value of secrets) expect({ value, found: text.includes(value) }).toEqual({ value, found: false });
  };

  beforeAll(async () => {
    receiver = await new Receiver().start();
    receiver.on('/echo', () => ({ body: '{"ok":true}' }));
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${receiver.port}` } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    events = await EventStream.open(t.port, projectId, tenant);
  });
  afterAll(async () => {
    events.close();
    await t.close();
    await receiver.close();
  });

  describe('[sec-62] fetch_url credential headers, any spelling, nested anywhere', () => {
    const spellings = [
      'Authorization',
      'authorization',
      'AUTHORIZATION',
      'Cookie',
      'cookie',
      'X-Api-Key',
      'x-API-key',
      'Api-Key',
      'X-Auth-Token',
      'X-Client-Secret',
    ];
    const sent = new Map<string, string>();

    beforeAll(async () => {
      for (const name of spellings) {
        const value = keep(secret(`v-${name}`));
        sent.set(name, value);
        const res = await invoke(t, tenant, projectId, 'fetch_url', {
          url: receiver.url('/echo'),
          headers: { [name]: value, Accept: 'application/json' },
        });
        expect({ name, status: res.status, tool: res.body.status }).toEqual({ name, status: 200, tool: 'ok' });
      }
    });

    it('[sec-62] the tool still sends every header with its real value', () => {
      for (const [name, value] of sent) {
        const received = receiver.to('/echo').find((r) => r.headers[name.toLowerCase()] === value);
        expect({ name, received: received !== undefined }).toEqual({ name, received: true });
      }
    });

    it('[sec-62] the audit keeps "[redacted]" in their place and lists each path; ordinary headers stay', async () => {
      const rows = (await listed()).filter((r) => r.tool === 'fetch_url').slice(0, spellings.length);
      expect(rows).toHaveLength(spellings.length);
      for (const [i, name] of spellings.entries()) {
        expect(rows[i].arguments).toEqual({ url: receiver.url('/echo'), headers: { [name]: '[redacted]', Accept: 'application/json' } });
        expect(rows[i].redactedPaths).toEqual([`/headers/${name}`]);
      }
    });

    it('[sec-62] redacts JSON-text arguments, refused arguments and the arguments of an unknown tool', async () => {
      const cookie = keep(secret('cookie-text'));
      await invoke(t, tenant, projectId, 'fetch_url', JSON.stringify({ url: receiver.url('/echo'), headers: { Cookie: cookie } })).expect(
        200,
      );
      expect(receiver.to('/echo').at(-1)!.headers.cookie).toBe(cookie);

      // A header value of the wrong type: refused, and audited redacted.
      const badKey = keep(secret('not-a-string').replace(/\D/g, '').padEnd(14, '7').slice(0, 14));
      const refused = await invoke(t, tenant, projectId, 'fetch_url', {
        url: receiver.url('/echo'),
        headers: { 'X-Api-Key': Number(badKey) },
      });
      expectRefusal(refused, 422, 'invalid_arguments');

      // fetch_url refuses to send Proxy-Authorization at all: the refusal is audited, redacted too.
      const proxy = keep(secret('proxy'));
      expectRefusal(
        await invoke(t, tenant, projectId, 'fetch_url', { url: receiver.url('/echo'), headers: { 'Proxy-Authorization': proxy } }),
        400,
        /.+/,
      );

      const nested = keep(secret('nested'));
      await invoke(t, tenant, projectId, 'fetch_urll', {
        url: receiver.url('/echo'),
        options: { headers: { Authorization: `Bearer ${nested}` } },
      }).expect(404);

      // A key pasted where the tool's name goes: the row (and the event) name the tool as the message does.
      const keyAsTool = keep(`sk-live-${randomBytes(16).toString('hex')}`);
      expectRefusal(await invoke(t, tenant, projectId, keyAsTool, {}), 404, 'tool_not_found');

      const rows = await listed();
      expect(rows.find((r) => r.tool === 'fetch_url' && typeof r.arguments === 'string')).toMatchObject({
        arguments: JSON.stringify({ url: receiver.url('/echo'), headers: { Cookie: '[redacted]' } }),
        redactedPaths: ['/headers/Cookie'],
      });
      expect(rows.find((r) => r.status === 'denied' && r.tool === 'fetch_url')).toMatchObject({
        redactedPaths: ['/headers/Proxy-Authorization'],
      });
      const invalid = rows.find((r) => r.status === 'invalid_arguments')!;
      expect(invalid).toMatchObject({
        redactedPaths: ['/headers/X-Api-Key'],
        arguments: { url: receiver.url('/echo'), headers: { 'X-Api-Key': '[redacted]' } },
      });
      expect(rows.filter((r) => r.tool.includes('[redacted]')).map((r) => [r.status, r.errorCode])).toEqual([['denied', 'tool_not_found']]);
      expect(rows.find((r) => r.tool === 'fetch_urll')).toMatchObject({
        status: 'denied',
        arguments: { url: receiver.url('/echo'), options: { headers: { Authorization: '[redacted]' } } },
        redactedPaths: ['/options/headers/Authorization'],
      });
    });

    it('[sec-62] no value appears in the listing, a row by id, the export, the events or the logs', async () => {
      await events.next((e) => e.event === 'tool.error' && (e.data as { tool?: string }).tool === 'fetch_urll');
      expectNoSecretIn(await everything());
    });
  });

  describe('[sec-63] a skill parameter declared writeOnly', () => {
    let pin: string;
    let code: string;
    let password: string;

    beforeAll(async () => {
      receiver.on('/skill', () => ({ body: '{"done":true}' }));
      const inputSchema = {
        type: 'object',
        properties: {
          account: { type: 'string' },
          pin: { type: 'string', writeOnly: true, pattern: '^[a-z0-9-]+$', description: 'sent to the endpoint, never kept' },
          steps: {
            type: 'array',
            items: { type: 'object', properties: { code: { type: 'string', writeOnly: true }, note: { type: 'string' } } },
          },
          login: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } } },
        },
        required: ['account', 'pin'],
        additionalProperties: false,
      };
      await installSkill(t, tenant, projectId, skillOf([httpTool('vault_unlock', receiver.url('/skill'), inputSchema)]));
      pin = keep(secret('pin'));
      code = keep(secret('code'));
      password = keep(secret('pw'));
      const res = await invoke(t, tenant, projectId, 'vault_unlock', {
        account: 'acme',
        pin,
        steps: [{ code, note: 'first' }],
        login: { user: 'ann', password },
      });
      expect({ status: res.status, tool: res.body.status }).toEqual({ status: 200, tool: 'ok' });
    });

    it('[sec-63] a refused value is blanked for the caller, in the audit row and in the event alike', async () => {
      const wrong = keep(`PIN-${randomBytes(24).toString('hex')}`);
      const refused = await invoke(t, tenant, projectId, 'vault_unlock', { account: 'acme', pin: wrong });
      const { message } = expectRefusal(refused, 422, 'invalid_arguments');
      // The caller is told which parameter broke which rule, not the value: a writeOnly value is never returned.
      expect(message).toContain("/pin must match the pattern ^[a-z0-9-]+$, got '[redacted]");
      expect(message).not.toContain(wrong.slice(0, 8));
      const row = (await listed()).find((r) => r.tool === 'vault_unlock' && r.status === 'invalid_arguments')!;
      expect(row).toMatchObject({ arguments: { account: 'acme', pin: '[redacted]' }, redactedPaths: ['/pin'] });
      expect(row.errorMessage).toContain("got '[redacted]");
      expect(row.errorMessage).not.toContain(wrong.slice(0, 8));
      const event = await events.next((e) => e.event === 'tool.error' && e.data.invocationId === row.id);
      expect((event.data as { error: { message: string } }).error.message).toBe(row.errorMessage);
    });

    it('[sec-63] the endpoint receives the real values', () => {
      expect(JSON.parse(receiver.to('/skill').at(-1)!.body)).toEqual({
        account: 'acme',
        pin,
        steps: [{ code, note: 'first' }],
        login: { user: 'ann', password },
      });
    });

    it('[sec-63] the audit row redacts the writeOnly values (and a nested password) and names their paths', async () => {
      const row = (await listed()).find((r) => r.tool === 'vault_unlock' && r.status === 'ok')!;
      expect(row.arguments).toEqual({
        account: 'acme',
        pin: '[redacted]',
        steps: [{ code: '[redacted]', note: 'first' }],
        login: { user: 'ann', password: '[redacted]' },
      });
      expect(row.redactedPaths).toEqual(['/pin', '/steps/0/code', '/login/password']);
      expectNoSecretIn(await everything());
    });
  });

  describe('[sec-64] the export of another tenant, a forged cursor, a bad window', () => {
    it('[sec-64] another tenant exporting this project gets the 404 of a missing project, and nothing streamed', async () => {
      const other = await t.createTenant();
      const foreign = await t.http.get(`/v1/projects/${projectId}/invocations/export`).set(other.auth);
      const missing = await t.http.get(`/v1/projects/00000000-0000-4000-8000-000000000000/invocations/export`).set(other.auth);
      expectRefusal(foreign, 404, 'project_not_found');
      expect(foreign.text.replace(/"requestId":"[^"]*"/, '').replace(projectId, 'ID')).toBe(
        missing.text.replace(/"requestId":"[^"]*"/, '').replace('00000000-0000-4000-8000-000000000000', 'ID'),
      );
      expect(foreign.headers['content-type']).toMatch(/^application\/json/);
    });

    it('[sec-64] a forged or out-of-range cursor and an empty window are refused before anything is streamed', async () => {
      const forged = [
        Buffer.from('seq:1 OR 1=1').toString('base64url'),
        Buffer.from(`seq:${'9'.repeat(19)}`).toString('base64url'),
        'not-a-cursor',
      ];
      for (const cursor of forged) {
        const res = await t.http.get(`/v1/projects/${projectId}/invocations/export`).query({ cursor }).set(tenant.auth);
        expectRefusal(res, 400, 'invalid_cursor');
        expect(res.headers['content-type']).toMatch(/^application\/json/);
      }
      const window = await t.http
        .get(`/v1/projects/${projectId}/invocations/export`)
        .query({ since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' })
        .set(tenant.auth);
      expectRefusal(window, 400, 'invalid_window');
      const notADate = await t.http.get(`/v1/projects/${projectId}/invocations/export`).query({ since: 'yesterday' }).set(tenant.auth);
      expect(notADate.status).toBe(400);
    });
  });
});
