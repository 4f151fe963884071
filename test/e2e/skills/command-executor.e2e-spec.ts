import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { eventually } from '../../support/eventually.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import {
  callTool,
  commandTool,
  expectError,
  expectNoProcess,
  installSkill,
  listSkills,
  postSkill,
  skillOf,
  STRING_ARG,
  type SkillToolBody,
  waitForProcess,
} from './skill-test-kit.js';

const FILES_ARG = {
  type: 'object',
  properties: { files: { type: 'array', items: { type: 'string' }, maxItems: 10 } },
  required: ['files'],
  additionalProperties: false,
};
const SECONDS_ARG = {
  type: 'object',
  properties: { seconds: { type: 'number', minimum: 0 } },
  required: ['seconds'],
  additionalProperties: false,
};

// A different duration per test, so the sleep each test starts can be told apart in /proc.
let sleepMarker = 0;
const uniqueSeconds = () => 40 + (process.pid % 1000) + ++sleepMarker / 1000;

describe('skills with a command executor', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  // Workspaces the trace tool may have written ran.log into.
  const traceWorkspaces: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf', 'sh', 'sleep', 'cat'] })).id;
    traceWorkspaces.push(t.workspaceOf(projectId));
    const tools: SkillToolBody[] = [
      commandTool('say', ['printf', '%s\n', '{{text}}'], STRING_ARG('text')),
      commandTool('greet', ['printf', '%s\n', '--name={{name}}'], STRING_ARG('name')),
      commandTool('show_all', ['printf', '[%s]\n', '{{...files}}'], FILES_ARG),
      commandTool('show_all_after_dashes', ['printf', '[%s]\n', '--', '{{...files}}'], FILES_ARG),
      // Appends its argument to ran.log in the workspace: proof of whether the command ran.
      commandTool('trace', ['sh', '-c', 'printf "%s\\n" "$1" >> "$0"', 'ran.log', '{{value}}'], STRING_ARG('value')),
      commandTool('read_note', ['cat', '{{file}}'], STRING_ARG('file')),
      commandTool('read_note_after_dashes', ['cat', '--', '{{file}}'], STRING_ARG('file')),
      commandTool('fail', ['sh', '-c', 'echo "$0" >&2; exit 3', '{{message}}'], STRING_ARG('message')),
      commandTool('say_sync', ['printf', '%s\n', '{{text}}'], STRING_ARG('text'), { mode: 'sync' }),
      commandTool('nap', ['sleep', '{{seconds}}'], SECONDS_ARG, { timeoutMs: 1000 }),
      commandTool('nap_sync', ['sleep', '{{seconds}}'], SECONDS_ARG, { timeoutMs: 1000, mode: 'sync' }),
      commandTool('long_nap_sync', ['sleep', '{{seconds}}'], SECONDS_ARG, { mode: 'sync' }),
      commandTool('long_nap', ['sleep', '{{seconds}}'], SECONDS_ARG),
    ];
    await installSkill(t, tenant, projectId, skillOf(tools));
  });
  afterAll(async () => {
    await t?.close();
  });

  const traced = async () => {
    const lines: string[] = [];
    for (const ws of traceWorkspaces) {
      const file = path.join(ws, 'ran.log');
      if (existsSync(file)) lines.push(...(await readFile(file, 'utf8')).split('\n').filter(Boolean));
    }
    return lines;
  };

  it('puts a {{param}} value in as one argument, spaces and quotes included', async () => {
    const text = `hello big  world; echo "not a shell" $HOME`;
    const res = await callTool(t, tenant, projectId, 'say', { text }).expect(200);
    expect(res.body).toEqual({
      invocationId: expect.any(String),
      tool: 'say',
      status: 'ok',
      result: { stdout: `${text}\n`, stderr: '', stdoutTruncated: false, stderrTruncated: false },
      durationMs: expect.any(Number),
    });
  });

  it('fills a placeholder inside an element (--name={{name}}), even with a value that starts with "-"', async () => {
    const res = await callTool(t, tenant, projectId, 'greet', { name: 'Ada Lovelace' }).expect(200);
    expect(res.body.result.stdout).toBe('--name=Ada Lovelace\n');
    const dashed = await callTool(t, tenant, projectId, 'greet', { name: '-x' }).expect(200);
    expect(dashed.body.result.stdout).toBe('--name=-x\n');
  });

  it('spreads an array with {{...files}}, one argument per item', async () => {
    const res = await callTool(t, tenant, projectId, 'show_all', { files: ['a b.txt', 'c.txt', ''] }).expect(200);
    expect(res.body.result.stdout).toBe('[a b.txt]\n[c.txt]\n[]\n');
    const none = await callTool(t, tenant, projectId, 'show_all', { files: [] }).expect(200);
    expect(none.body.result.stdout).toBe('[]\n');
  });

  it('refuses a value starting with "-" in a positional place with 422 argument_looks_like_option, and nothing runs', async () => {
    await callTool(t, tenant, projectId, 'trace', { value: 'first' }).expect(200);
    expect(await traced()).toEqual(['first']);

    for (const value of ['-rf', '--help', '-']) {
      const error = expectError(await callTool(t, tenant, projectId, 'trace', { value }), 422, 'argument_looks_like_option');
      expect(error.message).toContain("'value'");
      expect(error.details).toEqual({ parameter: 'value' });
    }
    expectError(
      await callTool(t, tenant, projectId, 'show_all', { files: ['ok.txt', '--output=/etc/passwd'] }),
      422,
      'argument_looks_like_option',
    );
    expect(await traced()).toEqual(['first']);

    const log = await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool: 'trace', limit: 100 }).set(tenant.auth).expect(200);
    const refused = (log.body.items as Array<{ status: string; errorCode: string | null }>).filter(
      (row) => row.errorCode === 'argument_looks_like_option',
    );
    expect(refused).toHaveLength(3);
  });

  it('allows a value starting with "-" after a literal "--"', async () => {
    const written = await callTool(t, tenant, projectId, 'write_file', { path: '-notes.txt', content: 'remember the milk\n' }).expect(200);
    expect(written.body.status).toBe('ok');

    expectError(await callTool(t, tenant, projectId, 'read_note', { file: '-notes.txt' }), 422, 'argument_looks_like_option');
    const res = await callTool(t, tenant, projectId, 'read_note_after_dashes', { file: '-notes.txt' }).expect(200);
    expect(res.body).toMatchObject({ status: 'ok', result: { stdout: 'remember the milk\n' } });

    const spread = await callTool(t, tenant, projectId, 'show_all_after_dashes', { files: ['-a', '--b'] }).expect(200);
    expect(spread.body.result.stdout).toBe('[--]\n[-a]\n[--b]\n');
  });

  it('refuses bad arguments with 422 invalid_arguments and the usage line before anything runs', async () => {
    const error = expectError(await callTool(t, tenant, projectId, 'trace', { value: 42 }), 422, 'invalid_arguments');
    expect(error.message).toContain('Usage: trace(value: string)');
    const missing = expectError(await callTool(t, tenant, projectId, 'show_all', {}), 422, 'invalid_arguments');
    expect(missing.message).toMatch(/files/);
    expect(missing.message).toContain('Usage: show_all(files: ');
    expect(await traced()).toEqual(['first']);
  });

  it("refuses with 403 command_not_allowed when the executable is not on the project's shellAllowlist", async () => {
    const other = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
    traceWorkspaces.push(t.workspaceOf(other));
    const tools = [commandTool('trace', ['sh', '-c', 'printf "%s\\n" "$1" >> "$0"', 'ran.log', '{{value}}'], STRING_ARG('value'))];
    const skill = await installSkill(t, tenant, other, skillOf(tools));

    const error = expectError(await callTool(t, tenant, other, 'trace', { value: 'from-other' }), 403, 'command_not_allowed');
    expect(error.message).toContain('"sh"');
    expect(error.message).toContain('printf');
    expect(await traced()).toEqual(['first']);

    const none = (await t.createProject(tenant, { shellEnabled: true })).id;
    traceWorkspaces.push(t.workspaceOf(none));
    await t.http.post(`/v1/projects/${none}/skills`).set(tenant.auth).send({ skillId: skill.id }).expect(201);
    const noneError = expectError(await callTool(t, tenant, none, 'trace', { value: 'from-none' }), 403, 'command_not_allowed');
    expect(noneError.message).toMatch(/allows no commands/);
    expect(await traced()).toEqual(['first']);
  });

  it('refuses with 403 shell_disabled on a project that has not enabled commands, as shell_exec does', async () => {
    const off = (await t.createProject(tenant, { shellAllowlist: ['sh', 'printf'] })).id;
    traceWorkspaces.push(t.workspaceOf(off));
    await installSkill(
      t,
      tenant,
      off,
      skillOf([commandTool('trace', ['sh', '-c', 'printf "%s\\n" "$1" >> "$0"', 'ran.log', '{{value}}'], STRING_ARG('value'))]),
    );
    const error = expectError(await callTool(t, tenant, off, 'trace', { value: 'from-off' }), 403, 'shell_disabled');
    expect(error.message).toContain('shellEnabled: true');
    expect(await traced()).not.toContain('from-off');
    const log = await t.http.get(`/v1/projects/${off}/invocations`).query({ tool: 'trace' }).set(tenant.auth).expect(200);
    expect(log.body.items).toMatchObject([{ status: 'denied', errorCode: 'shell_disabled' }]);
  });

  it('answers status error command_failed with the exit code and stderr when the command exits non-zero', async () => {
    const res = await callTool(t, tenant, projectId, 'fail', { message: 'disk is full' }).expect(200);
    expect(res.body).toMatchObject({ tool: 'fail', status: 'error', error: { code: 'command_failed', retryable: false } });
    expect(res.body.error.message).toContain('exited with code 3');
    expect(res.body.error.message).toContain('disk is full');
    expect(res.body.result).toBeUndefined();
  });

  it('runs a sync-mode command in the worker pool with the same templating and refusals', async () => {
    const res = await callTool(t, tenant, projectId, 'say_sync', { text: 'from the pool' }).expect(200);
    expect(res.body).toMatchObject({ status: 'ok', result: { stdout: 'from the pool\n' } });
    expectError(await callTool(t, tenant, projectId, 'say_sync', { text: '-n' }), 422, 'argument_looks_like_option');
  });

  for (const tool of ['nap', 'nap_sync']) {
    it(`stops a command at the tool's timeout: status timeout, and the process is gone (${tool})`, async () => {
      const seconds = uniqueSeconds();
      const call = callTool(t, tenant, projectId, tool, { seconds }).then((res) => res);
      const pid = await waitForProcess(String(seconds));
      expect(pid).toBeGreaterThan(1);
      const res = await call;
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ tool, status: 'timeout', error: { code: 'timeout', retryable: true } });
      expect(res.body.error.message).toContain('1000 ms');
      await expectNoProcess(String(seconds));
    });
  }

  it('honours a shorter timeout asked by the caller', async () => {
    const seconds = uniqueSeconds();
    const res = await callTool(t, tenant, projectId, 'long_nap_sync', { seconds }, { timeoutMs: 200 }).expect(200);
    expect(res.body).toMatchObject({ status: 'timeout', error: { code: 'timeout' } });
    expect(res.body.error.message).toContain('200 ms');
    await expectNoProcess(String(seconds));
  });

  for (const tool of ['long_nap_sync', 'long_nap']) {
    it(`kills the command when the caller goes away, and records the call as cancelled (${tool})`, async () => {
      const seconds = uniqueSeconds();
      const client = http.request({
        host: '127.0.0.1',
        port: t.port,
        method: 'POST',
        path: `/v1/projects/${projectId}/tools/${tool}/invoke`,
        headers: { ...tenant.auth, 'content-type': 'application/json' },
      });
      client.on('error', () => undefined);
      client.end(JSON.stringify({ arguments: { seconds } }));
      await waitForProcess(String(seconds));
      client.destroy();
      await expectNoProcess(String(seconds));

      const row = await eventually(async () => {
        const log = await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool, limit: 100 }).set(tenant.auth).expect(200);
        const found = (log.body.items as Array<{ arguments: { seconds?: number }; status: string; errorCode: string | null }>).find(
          (r) => r.arguments?.seconds === seconds,
        );
        expect(found).toBeDefined();
        return found!;
      });
      expect({ status: row.status, errorCode: row.errorCode }).toEqual({ status: 'error', errorCode: 'cancelled' });
    });
  }

  describe('argv templates checked at registration', () => {
    const refusedTemplate = async (argv: string[], inputSchema: Record<string, unknown>) => {
      const body = skillOf([commandTool('templated', argv, inputSchema)]);
      const res = await postSkill(t, tenant, body);
      const error = expectError(res, 422, 'schema_refused');
      expect((await listSkills(t, tenant)).map((s) => s.name)).not.toContain(body.name);
      return error;
    };

    it('refuses a placeholder that names no parameter', async () => {
      const error = await refusedTemplate(['printf', '%s', '{{nmae}}'], STRING_ARG('name'));
      expect(error.details).toEqual({
        tool: 'templated',
        schema: 'executor',
        location: '/argv/2',
        reason: expect.stringContaining('{{nmae}} names no parameter'),
      });
      expect(error.message).toBe("Tool 'templated': executor/argv/2 refused: {{nmae}} names no parameter of the input schema");
    });

    it('refuses a placeholder in argv[0]: the executable must be literal', async () => {
      const error = await refusedTemplate(['{{program}}', 'x'], STRING_ARG('program'));
      expect(error.details).toEqual({
        tool: 'templated',
        schema: 'executor',
        location: '/argv/0',
        reason: expect.stringMatching(/executable.*literal/),
      });
      const inside = await refusedTemplate(['/usr/bin/{{program}}'], STRING_ARG('program'));
      expect(inside.details).toMatchObject({ location: '/argv/0' });
    });

    it('refuses a spread of a parameter that is not an array, and a spread inside an element', async () => {
      const notArray = await refusedTemplate(['printf', '%s', '{{...name}}'], STRING_ARG('name'));
      expect(notArray.details).toMatchObject({ location: '/argv/2', reason: expect.stringMatching(/array parameter/) });
      const inside = await refusedTemplate(['printf', '%s', '--files={{...files}}'], FILES_ARG);
      expect(inside.details).toMatchObject({ location: '/argv/2', reason: expect.stringMatching(/whole argv element/) });
    });

    it('refuses a {{param}} standing for an object parameter', async () => {
      const schema = { type: 'object', properties: { opts: { type: 'object' } } };
      const error = await refusedTemplate(['printf', '%s', '{{opts}}'], schema);
      expect(error.details).toMatchObject({ location: '/argv/2', reason: expect.stringMatching(/string, number, integer or boolean/) });
    });
  });
});
