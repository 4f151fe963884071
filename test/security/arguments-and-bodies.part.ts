import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { AuditTrail, expectRefusal, invoke, invokeRaw } from './security-helpers.js';

// docs/security-model.md, "Tool schemas and request bodies", cases 37-39: hostile argument objects and request bodies
// sent over HTTP as raw JSON text, so that keys like `__proto__` reach the server exactly as written.

const BODY_LIMIT = 1024 * 1024;
const nested = (depth: number, open: string, close: string, inner = '') => open.repeat(depth) + inner + close.repeat(depth);

describe('tool arguments and request bodies over HTTP', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let ws: string;
  let audit: AuditTrail;

  const raw = (tool: string, json: string) => invokeRaw(t, tenant, projectId, tool, json);

  function expectPrototypesClean() {
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('isAdmin');
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  }

  async function settle() {
    const res = await invoke(t, tenant, projectId, 'read_file', { path: 'README.md' });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: expect.objectContaining({ status: 'ok', result: expect.objectContaining({ content: '# hello\n' }) }),
    });
    await t.http.get('/health/ready').expect(200);
  }

  // Express parses `__proto__` into an own key, which the argument gate refuses (422); a parser that refuses
  // such keys itself (Fastify's) answers 400 invalid_json before the gate. Both are refusals.
  const protoStatuses = () => (t.config.httpAdapter === 'fastify' ? [400, 422] : [422]);

  beforeAll(async () => {
    t = await createTestApp({ env: { BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    ws = t.workspaceOf(projectId);
    audit = new AuditTrail(t, tenant, projectId);
    await writeFile(path.join(ws, 'README.md'), '# hello\n');
  });

  beforeEach(() => audit.skip());

  afterAll(() => t.close(), 60_000);

  it.each([
    ['a top-level __proto__', '{"__proto__": {"isAdmin": true, "polluted": 1}, "path": "proto.txt", "content": "x"}', '/__proto__'],
    [
      'a nested constructor.prototype',
      '{"path": "proto.txt", "content": "x", "meta": {"deep": [{"constructor": {"prototype": {"isAdmin": true}}}]}}',
      '/meta/deep/0/constructor',
    ],
    [
      'a top-level constructor.prototype',
      '{"constructor": {"prototype": {"isAdmin": true}}, "path": "proto.txt", "content": "x"}',
      '/constructor',
    ],
    ['a prototype key', '{"path": "proto.txt", "content": "x", "prototype": {"isAdmin": true}}', '/prototype'],
    [
      'a __proto__ inside an array',
      '{"path": "proto.txt", "content": "x", "list": [1, [2, {"__proto__": {"isAdmin": true}}]]}',
      '/list/1/1/__proto__',
    ],
  ])('[sec-37] refuses %s in arguments before validation; no prototype changes', async (_what, args, pointer) => {
    const res = await raw('write_file', `{"arguments": ${args}}`);
    const { code } = expectRefusal(res, protoStatuses(), /^(invalid_arguments|invalid_json)$/);
    if (code === 'invalid_arguments') {
      // Refused for the key itself, before the schema would have said anything about unknown parameters.
      expect(res.body.error.issues).toEqual([expect.objectContaining({ path: pointer, keyword: 'forbiddenKey' })]);
      expect(res.body.error.message).toMatch(/__proto__|constructor|prototype/);
      const [row] = await audit.expectRows('invalid_arguments', [{ tool: 'write_file', errorCode: 'invalid_arguments' }]);
      expect(row.event).toBe('TOOL_ARG_VALIDATION_FAILURE');
    }
    expect(existsSync(path.join(ws, 'proto.txt'))).toBe(false);
    expectPrototypesClean();
    await settle();
    expectPrototypesClean();
  });

  it('[sec-37] refuses __proto__ and constructor.prototype in OpenAI-style string arguments', async () => {
    for (const text of [
      '{"__proto__": {"isAdmin": true}, "path": "README.md"}',
      '{"path": "README.md", "x": {"constructor": {"prototype": {"isAdmin": true}}}}',
    ]) {
      const res = await invoke(t, tenant, projectId, 'read_file', text);
      expectRefusal(res, 422, 'invalid_arguments');
      expect(res.body.error.issues).toEqual([expect.objectContaining({ keyword: 'forbiddenKey' })]);
    }
    await audit.expectRows('invalid_arguments', [
      { tool: 'read_file', errorCode: 'invalid_arguments' },
      { tool: 'read_file', errorCode: 'invalid_arguments' },
    ]);
    expectPrototypesClean();
    await settle();
  });

  it('refuses a key of nearly a megabyte of slashes at the first look: a small answer and a small audit row', async () => {
    // Each '/' becomes '~1' in a JSON Pointer: such a key once cost every later step (the schema's errors, the
    // redaction's paths, the answer, the audit row) a copy of twice its size, and the event loop a second.
    const key = `token${'/'.repeat(BODY_LIMIT - 200)}`;
    const res = await raw('read_file', JSON.stringify({ arguments: { path: 5, [key]: 'v' } }));
    expectRefusal(res, 422, 'invalid_arguments');
    expect(res.body.error.issues).toEqual([
      expect.objectContaining({ keyword: 'maxKeyLength', path: expect.stringMatching(/^\/token(~1)+…$/) }),
    ]);
    expect(JSON.stringify(res.body).length).toBeLessThan(4096);
    const [row] = await audit.expectRows('invalid_arguments', [{ tool: 'read_file', errorCode: 'invalid_arguments' }]);
    expect(row.argumentsTruncated).toBe(true);
    expect(JSON.stringify(row).length).toBeLessThan(32 * 1024);
    await settle();
  });

  it('[sec-37] refuses __proto__ beside "arguments" in the request body itself', async () => {
    const res = await raw('write_file', '{"__proto__": {"isAdmin": true}, "arguments": {"path": "proto.txt", "content": "x"}}');
    const { code } = expectRefusal(res, 400, /^(invalid_body|invalid_json)$/);
    if (code === 'invalid_body') await audit.expectRows('invalid_arguments', [{ tool: 'write_file', errorCode: 'invalid_body' }]);
    expect(existsSync(path.join(ws, 'proto.txt'))).toBe(false);
    expectPrototypesClean();
    await settle();
  });

  it('[sec-38] answers a body over BODY_LIMIT_BYTES with 413 and writes nothing', async () => {
    const res = await invoke(t, tenant, projectId, 'write_file', { path: 'big.txt', content: 'x'.repeat(BODY_LIMIT + 1024) });
    const { message } = expectRefusal(res, 413, 'payload_too_large');
    expect(message).toMatch(/limit/);
    expect(existsSync(path.join(ws, 'big.txt'))).toBe(false);
    await settle();
  });

  it.each([
    ['100,000 nested arrays as the body', () => nested(100_000, '[', ']')],
    [
      '100,000 nested arrays inside arguments',
      () => `{"arguments": {"path": "n.txt", "content": "x", "deep": ${nested(100_000, '[', ']')}}}`,
    ],
    [
      '100,000 nested objects inside arguments',
      () => `{"arguments": {"path": "n.txt", "content": "x", "deep": ${nested(100_000, '{"a":', '}', '1')}}}`,
    ],
    ['100,000 nested arrays as OpenAI-style string arguments', () => JSON.stringify({ arguments: nested(100_000, '[', ']') })],
    [
      '100,000 nested arrays inside OpenAI-style string arguments',
      () => JSON.stringify({ arguments: `{"path": "n.txt", "content": "x", "deep": ${nested(100_000, '[', ']')}}` }),
    ],
  ])('[sec-38] refuses %s with a 4xx quickly, and keeps serving', async (_what, body) => {
    const started = Date.now();
    const res = await raw('write_file', body());
    expect(Date.now() - started).toBeLessThan(5000);
    const { code } = expectRefusal(res, [400, 413, 422], /^(invalid_json|invalid_body|payload_too_large|invalid_arguments)$/);
    if (code === 'invalid_arguments') {
      expect(res.body.error.issues).toEqual([expect.objectContaining({ keyword: expect.stringMatching(/^(maxDepth|json|type)$/) })]);
      await audit.expectRows('invalid_arguments', [{ tool: 'write_file', errorCode: 'invalid_arguments' }]);
    }
    expect(existsSync(path.join(ws, 'n.txt'))).toBe(false);
    await settle();
  });

  it.each([
    '{"arguments": ',
    "{'arguments': {'path': 'README.md'}}",
    '{"arguments": {"path": "README.md"},}',
    '{"arguments": {"path": "README.md"}} trailing',
    'NaN',
    '\u0000',
  ])('[sec-38] answers the invalid JSON body %j with 400 invalid_json', async (body) => {
    const res = await raw('read_file', body);
    expectRefusal(res, 400, 'invalid_json');
    await settle();
  });

  it.each([
    ['{not json', 'not valid JSON'],
    ['{"path": "README.md"', 'not valid JSON'],
    ['', 'not valid JSON'],
    ["{'path': 'README.md'}", 'not valid JSON'],
    [JSON.stringify(JSON.stringify({ path: 'README.md' })), 'encoded twice'],
    ['["README.md"]', 'must be a JSON object'],
  ])('[sec-39] answers OpenAI-style arguments %j with 422 saying what is wrong', async (text, says) => {
    const res = await invoke(t, tenant, projectId, 'read_file', text);
    const { message } = expectRefusal(res, 422, 'invalid_arguments');
    expect(message).toContain(says);
    expect(res.body.error).toMatchObject({ tool: 'read_file', usage: expect.stringContaining('read_file(') });
    const [row] = await audit.expectRows('invalid_arguments', [{ tool: 'read_file', errorCode: 'invalid_arguments' }]);
    expect(row.event).toBe('TOOL_ARG_VALIDATION_FAILURE');
    await settle();
  });

  it('[sec-39] accepts valid OpenAI-style string arguments', async () => {
    const res = await invoke(t, tenant, projectId, 'read_file', '{"path": "README.md"}').expect(200);
    expect(res.body).toMatchObject({ status: 'ok', result: { content: '# hello\n' } });
  });
});
