import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { callTool, invoke, SHELL_PROJECT } from './tool-test-kit.js';

const READ_FILE_USAGE = "read_file(path: string, offset?: integer, limit?: integer, encoding?: 'utf8'|'base64')";

describe('tool invocation', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let ws: string;

  const call = (tool: string, args: unknown, options: { timeoutMs?: number } = {}) => callTool(t, tenant, projectId, tool, args, options);

  // Every 422 has this one shape; the message lists the problems and ends with the usage line.
  const expectInvalidArguments = (body: unknown, tool: string, issues: unknown) => {
    expect(body).toEqual({
      error: {
        code: 'invalid_arguments',
        message: expect.any(String),
        tool,
        issues,
        usage: expect.stringMatching(new RegExp(`^${tool}\\(`)),
      },
      requestId: expect.any(String),
    });
    const { message, usage } = (body as { error: { message: string; usage: string } }).error;
    expect(message.startsWith(`Invalid arguments for ${tool}: `)).toBe(true);
    expect(message.endsWith(`Usage: ${usage}`)).toBe(true);
    return message;
  };

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    ws = t.workspaceOf(projectId);
    await mkdir(path.join(ws, 'docs'));
    await writeFile(path.join(ws, 'docs/guide.md'), '# Guide\nstep one\nstep two\n');
  });
  afterAll(() => t.close());

  describe('arguments', () => {
    it('takes the arguments as an object or as a JSON string, as OpenAI sends them, with the same result', async () => {
      const asObject = await call('read_file', { path: 'docs/guide.md', offset: 2 }).expect(200);
      const asString = await call('read_file', JSON.stringify({ path: 'docs/guide.md', offset: 2 })).expect(200);
      expect(asObject.body).toEqual({
        invocationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        tool: 'read_file',
        status: 'ok',
        result: expect.objectContaining({ path: 'docs/guide.md', content: 'step one\nstep two\n' }),
        durationMs: expect.any(Number),
      });
      expect(asString.body.result).toEqual(asObject.body.result);
      expect(asString.body.invocationId).not.toBe(asObject.body.invocationId);
    });

    it('answers 422 saying so for a JSON string that does not parse', async () => {
      const res = await call('read_file', '{"path": "docs/guide.md"').expect(422);
      const message = expectInvalidArguments(res.body, 'read_file', [
        expect.objectContaining({ path: '', keyword: 'json', expected: 'JSON object' }),
      ]);
      expect(message).toMatch(/arguments are not valid JSON/);
    });

    it.each([
      ['null', null, /must be a JSON object, got null/],
      ['an array', [{ path: 'docs/guide.md' }], /must be a JSON object, got array/],
      ['a number', 42, /must be a JSON object, got number/],
      ['an object encoded twice', JSON.stringify(JSON.stringify({ path: 'docs/guide.md' })), /encoded twice/],
    ])('answers 422 for arguments given as %s', async (_what, args, expected) => {
      const res = await call('read_file', args).expect(422);
      const message = expectInvalidArguments(res.body, 'read_file', [
        expect.objectContaining({ path: '', keyword: 'type', expected: 'object' }),
      ]);
      expect(message).toMatch(expected);
    });

    it('names a missing required parameter', async () => {
      const res = await call('read_file', {}).expect(422);
      const message = expectInvalidArguments(res.body, 'read_file', [
        { path: '/path', keyword: 'required', message: 'missing required parameter: path', expected: 'string' },
      ]);
      expect(message).toBe(`Invalid arguments for read_file: missing required parameter: path. Usage: ${READ_FILE_USAGE}`);
    });

    it('names a parameter of the wrong type with what it got', async () => {
      const res = await call('read_file', { path: 42 }).expect(422);
      expectInvalidArguments(res.body, 'read_file', [
        { path: '/path', keyword: 'type', message: '/path must be string, got number', expected: 'string', received: '42' },
      ]);
      expect(res.body.error.message).toContain('/path must be string, got number');
    });

    it('names an unknown parameter and suggests the near one', async () => {
      const res = await call('read_file', { path: 'docs/guide.md', limt: 2 }).expect(422);
      expectInvalidArguments(res.body, 'read_file', [
        expect.objectContaining({
          path: '/limt',
          keyword: 'additionalProperties',
          message: "unknown parameter: limt; did you mean 'limit'?",
        }),
      ]);
      expect(res.body.error.message).toContain("unknown parameter: limt; did you mean 'limit'?");
    });

    it('names the allowed values of an enum', async () => {
      const res = await call('read_file', { path: 'docs/guide.md', encoding: 'hex' }).expect(422);
      expectInvalidArguments(res.body, 'read_file', [
        expect.objectContaining({ path: '/encoding', keyword: 'enum', expected: "'utf8'|'base64'", received: '"hex"' }),
      ]);
      expect(res.body.error.message).toContain("/encoding must be one of 'utf8', 'base64', got 'hex'");
    });

    it('names a value that does not fit the format', async () => {
      const res = await call('fetch_url', { url: 'not a url' }).expect(422);
      const message = expectInvalidArguments(
        res.body,
        'fetch_url',
        expect.arrayContaining([expect.objectContaining({ path: '/url', keyword: 'format', expected: 'uri', received: '"not a url"' })]),
      );
      expect(message).toContain("/url must be a valid uri, got 'not a url'");
      expect(res.body.error.usage).toMatch(/^fetch_url\(url: string, method\?: 'GET'\|/);
    });

    it('lists every problem of one call in one message', async () => {
      const res = await call('read_file', { path: 7, offset: 0, encoding: 'hex' }).expect(422);
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).toEqual(['/path', '/offset', '/encoding']);
      for (const fragment of ['/path must be string', '/offset', '/encoding']) expect(res.body.error.message).toContain(fragment);
    });

    it('refuses a prototype key anywhere in the arguments, before validation', async () => {
      const res = await call('read_file', '{"path":"docs/guide.md","__proto__":{"isAdmin":true}}').expect(422);
      expectInvalidArguments(res.body, 'read_file', [expect.objectContaining({ path: '/__proto__', keyword: 'forbiddenKey' })]);
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    });
  });

  describe('the call envelope', () => {
    it('answers an unknown tool with 404 tool_not_found naming the closest tool', async () => {
      const res = await call('reed_file', { path: 'docs/guide.md' }).expect(404);
      expect(res.body).toEqual({
        error: {
          code: 'tool_not_found',
          message: expect.stringContaining("Did you mean 'read_file'?"),
          details: { suggestions: ['read_file'] },
        },
        requestId: expect.any(String),
      });
      const far = await call('compile_everything', {}).expect(404);
      expect(far.body.error.details.suggestions).toEqual([]);
      expect(far.body.error.message).toMatch(/Available tools: .*read_file/);
    });

    it('refuses a body with unknown fields or of the wrong kind with 400 invalid_body', async () => {
      const extra = await invoke(t, tenant, projectId, 'read_file', { arguments: { path: 'docs/guide.md' }, args: {} }).expect(400);
      expect(extra.body.error.code).toBe('invalid_body');
      expect(extra.body.error.message).toContain('args');
      const array = await invoke(t, tenant, projectId, 'read_file', [{ path: 'docs/guide.md' }]).expect(400);
      expect(array.body.error.code).toBe('invalid_body');
    });

    it.each([0, -5, 1.5, '500'])('refuses timeoutMs %p with 400 invalid_timeout', async (timeoutMs) => {
      const res = await invoke(t, tenant, projectId, 'read_file', { arguments: { path: 'docs/guide.md' }, timeoutMs }).expect(400);
      expect(res.body.error.code).toBe('invalid_timeout');
    });

    it('answers 404 project_not_found for a missing project before looking at the tool', async () => {
      const res = await invoke(t, tenant, '00000000-0000-4000-8000-000000000000', 'reed_file', { arguments: {} }).expect(404);
      expect(res.body.error.code).toBe('project_not_found');
      await invoke(t, tenant, 'not-a-uuid', 'read_file', { arguments: { path: 'x' } }).expect(404);
    });
  });

  describe('outcomes', () => {
    it('answers 200 with status error, a code and a message for a missing file, with no stack and no host path', async () => {
      const res = await call('read_file', { path: 'docs/missing.md' }).expect(200);
      expect(res.body).toEqual({
        invocationId: expect.any(String),
        tool: 'read_file',
        status: 'error',
        error: { code: 'not_found', message: expect.stringContaining("'docs/missing.md'"), retryable: false },
        durationMs: expect.any(Number),
      });
      expect(res.text).not.toContain(t.tmpDir);
      expect(res.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
      expect(res.text).not.toMatch(/ENOENT/);
    });

    it('reads through an absolute path inside the workspace', async () => {
      const res = await call('read_file', { path: path.join(ws, 'docs/guide.md'), limit: 1 }).expect(200);
      expect(res.body.result.content).toBe('# Guide\n');
    });

    it.each([
      ['../../etc/passwd', 'a relative escape'],
      ['/etc/passwd', 'an absolute path outside'],
      ['docs/../../outside.txt', 'an escape after a real segment'],
    ])('refuses %s (%s) with 403 path_outside_workspace, not a result', async (p) => {
      const res = await call('read_file', { path: p }).expect(403);
      expect(res.body).toEqual({
        error: { code: 'path_outside_workspace', message: expect.stringContaining('outside the project workspace'), details: { path: p } },
        requestId: expect.any(String),
      });
    });

    it('refuses shell_exec with 403 shell_disabled in a project that has not enabled it', async () => {
      const res = await call('shell_exec', { argv: ['echo', 'hi'] }).expect(403);
      expect(res.body.error.code).toBe('shell_disabled');
      expect(res.body.error.message).toMatch(/not enabled for this project/);
    });
  });

  describe('timeouts', () => {
    let shellProjectId: string;

    beforeAll(async () => {
      shellProjectId = (await t.createProject(tenant, SHELL_PROJECT)).id;
    });

    it("caps the request's timeoutMs at the tool's own instead of honouring a longer one", async () => {
      // Past 2^31-1 ms a Node timer fires at once: an uncapped deadline would stop this command at the start.
      const res = await callTool(
        t,
        tenant,
        shellProjectId,
        'shell_exec',
        { argv: ['sh', '-c', 'sleep 0.3; echo done'] },
        {
          timeoutMs: 10_000_000_000,
        },
      ).expect(200);
      expect(res.body.status).toBe('ok');
      expect(res.body.result).toMatchObject({ exitCode: 0, stdout: 'done\n' });
    });

    it("applies a request timeoutMs shorter than the tool's, and says so in the error", async () => {
      const res = await callTool(t, tenant, shellProjectId, 'shell_exec', { argv: ['sleep', '5'] }, { timeoutMs: 300 }).expect(200);
      expect(res.body).toEqual({
        invocationId: expect.any(String),
        tool: 'shell_exec',
        status: 'timeout',
        error: { code: 'timeout', message: 'The tool did not finish within 300 ms and was stopped', retryable: true },
        durationMs: expect.any(Number),
      });
      expect(res.body.durationMs).toBeLessThan(5000);
    });
  });
});
