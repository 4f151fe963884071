import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { commandTool, installSkill, skillOf, STRING_ARG } from '../e2e/skills/skill-test-kit.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { expectRefusal, invoke } from './security-helpers.js';

// docs/security-model.md case 55: when no sandbox can be set up, commands are refused with the reason and the
// fix, nothing runs unsandboxed, and everything else keeps working. These run everywhere, bubblewrap or not:
// the missing tool and the failing probe are made here.

describe('commands when the sandbox cannot be set up', () => {
  let fakes: string;

  beforeAll(async () => {
    fakes = await mkdtemp(path.join(os.tmpdir(), 'toolgate-fake-bwrap-'));
    await chmod(fakes, 0o755);
  });
  afterAll(() => rm(fakes, { recursive: true, force: true }));

  async function refusesCommands(env: Record<string, string>, reason: RegExp, fix: RegExp) {
    const t = await createTestApp({ env: { COMMAND_SANDBOX: 'bwrap', ...env } });
    try {
      const tenant = await t.createTenant();
      const project = await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['touch', 'sh'] });
      const ws = t.workspaceOf(project.id);

      const error = expectRefusal(
        await invoke(t, tenant, project.id, 'shell_exec', { argv: ['touch', 'ran'] }),
        503,
        'sandbox_unavailable',
      );
      expect(error.message).toMatch(reason);
      expect(error.message).toMatch(fix);
      await commandSkillRefused(t, tenant, project.id, reason);
      expect(existsSync(path.join(ws, 'ran'))).toBe(false);

      // Everything else works, and readiness stays green while saying why commands do not.
      expect((await invoke(t, tenant, project.id, 'write_file', { path: 'a.txt', content: 'still here' }).expect(200)).body.status).toBe(
        'ok',
      );
      const ready = await t.http.get('/health/ready').set(t.admin).expect(200);
      expect(ready.body).toEqual({
        status: 'ok',
        commandSandbox: { mode: 'bwrap', ready: false, reason: expect.stringMatching(reason), fix: expect.stringMatching(fix) },
        auditQueue: expect.any(Object),
        changeBus: expect.objectContaining({ connected: true }),
        rateLimitStore: { mode: 'memory', ready: true },
      });

      const log = await t.http.get(`/v1/projects/${project.id}/invocations`).query({ tool: 'shell_exec' }).set(tenant.auth).expect(200);
      expect(log.body.items).toMatchObject([{ status: 'denied', errorCode: 'sandbox_unavailable' }]);
      // Said once, at start-up, not per call.
      expect(t.logs.filter((line) => String(line.msg).startsWith('Commands are refused'))).toHaveLength(1);
    } finally {
      await t.close();
    }
  }

  async function commandSkillRefused(t: TestApp, tenant: TestTenant, projectId: string, reason: RegExp) {
    await installSkill(t, tenant, projectId, skillOf([commandTool('touch_it', ['touch', '{{name}}'], STRING_ARG('name'))]));
    const res = await invoke(t, tenant, projectId, 'touch_it', { name: 'ran' });
    expect(expectRefusal(res, 503, 'sandbox_unavailable').message).toMatch(reason);
  }

  it('[sec-55] refuses commands with 503 sandbox_unavailable, naming the fix, when bubblewrap is not installed', async () => {
    await refusesCommands(
      { SANDBOX_BWRAP_PATH: path.join(fakes, 'missing', 'bwrap') },
      /bubblewrap is not installed/,
      /apt-get install bubblewrap/,
    );
  });

  it('[sec-55] refuses commands when the start-up probe fails (a "bwrap" that runs the command without a sandbox)', async () => {
    // Answers --version like bubblewrap, then runs the command as is: the probe must see that it is not confined.
    const fake = path.join(fakes, 'no-sandbox');
    await writeFile(
      fake,
      '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n',
    );
    await chmod(fake, 0o755);
    // Whichever check trips first (it depends on what else runs as the sandbox uid), commands are refused.
    await refusesCommands({ SANDBOX_BWRAP_PATH: fake }, /probe|network|environment|root|could not start a command/, /user namespaces/);
  });

  it('[sec-55] refuses a bubblewrap binary that others could replace', async () => {
    const writable = path.join(fakes, 'writable-bwrap');
    await writeFile(writable, '#!/bin/sh\necho "bubblewrap 0.8.0"\n');
    await chmod(writable, 0o777);
    await refusesCommands({ SANDBOX_BWRAP_PATH: writable }, /can be replaced by another user/, /chmod 755/);
  });

  it('runs commands unsandboxed only when the operator says COMMAND_SANDBOX=none, and warns at start-up', async () => {
    const t = await createTestApp({ env: { COMMAND_SANDBOX: 'none' } });
    try {
      expect(t.logs.filter((line) => line.level === 'warn' && String(line.msg).startsWith('COMMAND_SANDBOX=none'))).toHaveLength(1);
      const tenant = await t.createTenant();
      const project = await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf'] });
      const res = await invoke(t, tenant, project.id, 'shell_exec', { argv: ['printf', 'unconfined'] }).expect(200);
      expect(res.body.result.stdout).toBe('unconfined');
      expect((await t.http.get('/health/ready').set(t.admin).expect(200)).body.commandSandbox).toEqual({ mode: 'none', ready: true });
    } finally {
      await t.close();
    }
  });
});
