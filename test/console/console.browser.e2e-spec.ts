/// <reference lib="dom" />
// page.evaluate callbacks run in the browser.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { describeInBrowser, launchChromium, baseUrl, signInToConsole, watchPage } from '../support/console-browser.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

const run = promisify(execFile);
// CONSOLE_SCREENSHOTS=1 writes the pages this walk passes through to docs/console/ (the README shows them).
const SHOTS = process.env.CONSOLE_SCREENSHOTS ? path.resolve('docs/console') : undefined;

describeInBrowser('the console in a real browser', 'the console in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let tenant: TestTenant;
  let projectId: string;
  let laptopKey: string;
  const problems: string[] = [];

  const shot = async (name: string, on: Page = page) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await on.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  const watch = (on: Page) => watchPage(on, problems);
  const signIn = (on: Page, key: string) => signInToConsole(on, base, key);

  beforeAll(async () => {
    t = await createTestApp();
    base = baseUrl(t);
    tenant = await t.createTenant('acme');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    watch(page);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  afterEach(() => {
    expect(problems).toEqual([]);
  });

  it('signs a tenant in with an API key kept in session storage', async () => {
    await page.goto(`${base}/console/`);
    await shot('sign-in');
    await page.getByLabel('API key', { exact: true }).fill(tenant.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('toolgate.console.session'))).toContain(tenant.key);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
  });

  it('creates a project and edits its settings', async () => {
    await page.getByLabel('Name').fill('Docs site');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { name: 'Docs site', level: 1 }).waitFor();
    projectId = /\/console\/projects\/([^/]+)/.exec(page.url())![1]!;
    const created = await t.http.get(`/v1/projects/${projectId}`).set(tenant.auth).expect(200);
    expect(created.body).toMatchObject({ name: 'Docs site', slug: 'docs-site', shellEnabled: false });

    await page.getByLabel('Allow shell_exec').check();
    await page.getByLabel('Shell allowlist').fill('git, ls');
    await page.getByLabel('Tools that need approval').fill('delete_file');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await shot('project-settings');
    const saved = await t.http.get(`/v1/projects/${projectId}`).set(tenant.auth).expect(200);
    expect(saved.body).toMatchObject({ shellEnabled: true, shellAllowlist: ['git', 'ls'], approvalRequired: ['delete_file'] });
  });

  it('tries read_file with valid input and with invalid input, and shows both answers', async () => {
    await mkdir(t.workspaceOf(projectId), { recursive: true });
    await writeFile(path.join(t.workspaceOf(projectId), 'README.md'), 'hello from the console test\n');
    await page.getByRole('link', { name: 'Tools', exact: true }).click();
    const card = page.locator('li.card', { has: page.getByRole('heading', { name: 'read_file' }) });
    await card.getByRole('button', { name: 'Try it' }).click();
    await card.getByLabel(/^path/).fill('README.md');
    await card.getByRole('button', { name: 'Invoke read_file' }).click();
    const answer = card.getByTestId('tool-answer');
    await answer.filter({ hasText: 'hello from the console test' }).waitFor();
    expect(await answer.textContent()).toContain('Status ok');

    // No path: the service refuses with 422, and the page shows what the model would be told.
    await card.getByLabel(/^path/).fill('');
    await card.getByRole('button', { name: 'Invoke read_file' }).click();
    await answer.filter({ hasText: 'HTTP 422' }).waitFor();
    const direct = await t.http
      .post(`/v1/projects/${projectId}/tools/read_file/invoke`)
      .set(tenant.auth)
      .send({ arguments: {} })
      .expect(422);
    expect(await answer.locator('.model-message').textContent()).toBe(direct.body.error.message);
    expect(await answer.textContent()).toContain('invalid_arguments');
    await shot('tool-try-it');
  });

  it('shows in the live tail a call made with curl, and lists it in the log with filters', async () => {
    await page.getByRole('link', { name: 'Invocation log' }).click();
    await page.getByText('connected', { exact: true }).waitFor();
    // Outside the browser: an agent's call, made with curl.
    await run('curl', [
      '-sS',
      '-X',
      'POST',
      `${base}/v1/projects/${projectId}/tools/list_files/invoke`,
      '-H',
      `Authorization: Bearer ${tenant.key}`,
      '-H',
      'content-type: application/json',
      '-d',
      '{"arguments":{"path":"."}}',
    ]);
    const tail = page.getByRole('list', { name: 'Tool events, newest first' });
    await tail.getByText('tool.completed').waitFor();
    expect(await tail.textContent()).toContain('list_files');
    // The tenant's key from createTestApp is named "default": the tail says whose call it was.
    expect(await tail.textContent()).toContain('by default');

    // The audit log is written behind the answers: wait until the curl call is in it.
    const audited = async (query: string) =>
      (await t.http.get(`/v1/projects/${projectId}/invocations?${query}`).set(tenant.auth).expect(200)).body.items as unknown[];
    for (let i = 0; i < 50 && (await audited('tool=list_files')).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    const rowCount = () => page.locator('table tbody tr').count();

    await page.getByLabel('Status').selectOption('invalid_arguments');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const invalid = await audited('status=invalid_arguments');
    expect(invalid.length).toBeGreaterThan(0);
    await page.waitForFunction((n) => document.querySelectorAll('table tbody tr').length === n, invalid.length);
    for (const row of await page.locator('table tbody tr').allTextContents()) expect(row).toContain('invalid_arguments');

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Tool', { exact: true }).fill('list_files');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);
    expect(await page.locator('table tbody tr').first().textContent()).toContain('list_files');
    const headers = await page.locator('table thead th').allTextContents();
    expect(await page.locator('table tbody tr').first().locator('td').nth(headers.indexOf('Caller')).textContent()).toBe('default');

    await page.getByLabel('Tool', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const all = await audited('limit=50');
    await page.waitForFunction((n) => document.querySelectorAll('table tbody tr').length === n, all.length);
    expect(await rowCount()).toBeGreaterThanOrEqual(4);
    await shot('invocation-log');
  });

  it('registers a skill from JSON, enables it, and shows a collision', async () => {
    await page.getByRole('link', { name: 'Skills', exact: true }).first().click();
    await page.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
    const skill = {
      name: 'greeter',
      version: '1.0.0',
      description: 'Says hello',
      tools: [
        {
          name: 'say_hello',
          description: 'Prints a greeting',
          inputSchema: { type: 'object', properties: {} },
          executor: { type: 'command', argv: ['echo', 'hello'] },
        },
      ],
    };
    await page.getByLabel('Skill (JSON)').fill(JSON.stringify(skill, null, 2));
    await page.getByRole('button', { name: 'Register skill' }).click();
    await page.getByRole('status').filter({ hasText: 'greeter@1.0.0' }).waitFor();
    // A second skill whose tool takes a built-in's name.
    await page
      .getByLabel('Skill (JSON)')
      .fill(JSON.stringify({ ...skill, name: 'shadow', tools: [{ ...skill.tools[0], name: 'read_file' }] }));
    await page.getByRole('button', { name: 'Register skill' }).click();
    await page.getByRole('status').filter({ hasText: 'shadow@1.0.0' }).waitFor();
    await shot('skills');

    await page.goto(`${base}/console/projects/${projectId}/skills`);
    await page.getByLabel('Skill to enable').selectOption({ label: 'greeter@1.0.0' });
    await page.getByRole('button', { name: 'Enable skill' }).click();
    await page.locator('.enabled-skill', { hasText: 'greeter@1.0.0' }).waitFor();
    await page.getByLabel('Skill to enable').selectOption({ label: 'shadow@1.0.0' });
    await page.getByRole('button', { name: 'Enable skill' }).click();
    await page.getByText('tool_name_collision').waitFor();
    expect(await page.locator('.collisions').textContent()).toContain('read_file is already provided by the built-in tools');
    await shot('project-skills');
    const enabled = await t.http.get(`/v1/projects/${projectId}/skills`).set(tenant.auth).expect(200);
    expect(enabled.body.items.map((s: { name: string }) => s.name)).toEqual(['greeter']);
  });

  it('creates a key, then revokes the key it signed in with, and is signed out', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByText('this session').waitFor();
    await page.getByLabel('Key name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    laptopKey = (await page.getByRole('status').locator('code.secret').textContent())!;
    await t.http
      .get('/v1/projects')
      .set({ Authorization: `Bearer ${laptopKey}` })
      .expect(200);
    await page.getByRole('cell', { name: 'laptop', exact: true }).waitFor();
    await shot('api-keys');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: /^Revoke key default/ }).click();
    await page.getByText('You revoked the key you were signed in with.').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('toolgate.console.session'))).toBeNull();
    await t.http.get('/v1/projects').set(tenant.auth).expect(401);
  });

  it('lets the operator list tenants and their keys, issue and revoke a key, and read the health page', async () => {
    await page.getByLabel('the operator (admin token)').check();
    await page.getByLabel('Admin token', { exact: true }).fill('wrong-token-0123456789');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Sign-in failed').waitFor();
    await page.getByLabel('Admin token', { exact: true }).fill(t.admin.Authorization.slice('Bearer '.length));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Tenants', level: 1 }).waitFor();
    const acme = page.locator('li.card', { has: page.getByRole('heading', { name: 'acme' }) });
    // The revoked key is gone from the list; the one made in the tenant's console is there.
    await acme.getByRole('cell', { name: 'laptop', exact: true }).waitFor();
    expect(await acme.getByRole('cell', { name: 'default', exact: true }).count()).toBe(0);
    await acme.getByRole('button', { name: 'Issue key' }).click();
    const issued = (await acme.locator('code.secret').textContent())!;
    await acme.getByRole('cell', { name: 'default', exact: true }).waitFor();
    await shot('operator-tenants');
    await t.http
      .get('/v1/projects')
      .set({ Authorization: `Bearer ${issued}` })
      .expect(200);

    // An agent key: the operator, who has no listing of a tenant's projects, types the project's id.
    await acme.getByLabel("New key's name").fill('ci-agent');
    await acme.getByLabel('Role').selectOption('agent');
    await acme.getByLabel('Project ids').fill(projectId);
    await acme.getByLabel('Tools').fill('read_*, list_files');
    await acme.getByRole('button', { name: 'Issue key' }).click();
    const agentRow = acme.getByRole('row').filter({ has: page.getByRole('cell', { name: 'ci-agent', exact: true }) });
    await agentRow.waitFor();
    expect(await agentRow.getByRole('cell').allTextContents()).toEqual(
      expect.arrayContaining(['agent', projectId, 'read_*, list_files', 'never']),
    );
    const agentKey = (await acme.locator('code.secret').textContent())!;
    const listed = (await t.http.get(`/v1/admin/tenants/${tenant.id}/api-keys`).set(t.admin).expect(200)).body.items as Array<
      Record<string, unknown>
    >;
    expect(listed.find((k) => k.name === 'ci-agent')).toMatchObject({
      role: 'agent',
      projectIds: [projectId],
      tools: ['read_*', 'list_files'],
    });

    // Signed in with it, the agent sees its project's tools and log, may try a tool, and decides nothing.
    const agent = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    watch(agent);
    await signIn(agent, agentKey);
    expect(await agent.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).toEqual(['Projects']);
    await agent.getByRole('link', { name: 'Docs site' }).click();
    expect(await agent.getByRole('navigation', { name: 'Project sections' }).getByRole('link').allTextContents()).toEqual([
      'Tools',
      'Invocation log',
    ]);
    await agent.getByRole('heading', { name: 'read_file' }).waitFor();
    // Only the tools it is bound to are listed, each with Try it.
    expect(await agent.locator('li.card h3').allTextContents()).toEqual(expect.arrayContaining(['read_file', 'list_files']));
    expect(await agent.getByRole('heading', { name: 'write_file' }).count()).toBe(0);
    expect(await agent.getByRole('button', { name: 'Try it' }).count()).toBe(await agent.locator('li.card').count());
    await agent.close();

    await acme.getByRole('button', { name: /^Revoke key laptop/ }).click();
    await page.waitForFunction(() => !document.body.textContent.includes('laptop'));
    await t.http
      .get('/v1/projects')
      .set({ Authorization: `Bearer ${laptopKey}` })
      .expect(401);

    await page.getByRole('link', { name: 'Health' }).click();
    await page.getByText('Command sandbox').waitFor();
    // The console sends the admin token, so the page shows what /health/ready tells the operator.
    const ready = (await t.http.get('/health/ready').set(t.admin).expect(200)).body as {
      commandSandbox: { mode: string };
      auditQueue: { capacity: number };
    };
    const facts = await page.locator('.facts').textContent();
    expect(facts).toContain(ready.commandSandbox.mode);
    expect(facts).toMatch(new RegExp(`Audit queue\\d+ waiting of ${ready.auditQueue.capacity}`));
    await shot('operator-health');
  });

  it('lets an admin make an approver key, and the approver approve a parked call seeing its full arguments', async () => {
    const org = await t.createTenant('globex');
    const payments = await t.createProject(org, { name: 'Payments', approvalRequired: ['@writes'] });
    await mkdir(t.workspaceOf(payments.id), { recursive: true });

    const admin = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    watch(admin);
    await signIn(admin, org.key);
    await admin.getByRole('link', { name: 'API keys' }).click();
    await admin.getByLabel('Key name').fill('reviewer');
    await admin.getByLabel('Role').selectOption('approver');
    await admin.getByLabel('Payments').check();
    await admin.getByLabel('Expires').fill('2099-06-15T12:00');
    await shot('api-key-roles', admin);
    await admin.getByRole('button', { name: 'Create key' }).click();
    const reviewerKey = (await admin.getByRole('status').locator('code.secret').textContent())!;
    const row = admin.getByRole('row').filter({ has: admin.getByRole('cell', { name: 'reviewer', exact: true }) });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['approver', 'Payments', '—']));
    const keys = (await t.http.get('/v1/api-keys').set(org.auth).expect(200)).body.items as Array<Record<string, unknown>>;
    expect(keys.find((k) => k.name === 'reviewer')).toMatchObject({
      role: 'approver',
      projectIds: [payments.id],
      tools: [],
      expiresAt: expect.stringMatching(/^2099-06-1[45]T/),
    });

    // The admin key makes a call that @writes parks; its arguments are longer than the log keeps.
    const content = `${'release notes '.repeat(800)}(the end)`;
    const parked = await t.http
      .post(`/v1/projects/${payments.id}/tools/write_file/invoke`)
      .set(org.auth)
      .send({ arguments: { path: 'RELEASE.md', content } })
      .expect(202);
    const invocationId = parked.body.invocationId as string;
    const logged = (await t.http.get(`/v1/projects/${payments.id}/invocations?status=pending_approval`).set(org.auth).expect(200)).body
      .items;
    expect(logged).toMatchObject([{ id: invocationId, argumentsTruncated: true }]);

    // The key that made the call cannot decide it, and the page says why.
    await admin.getByRole('link', { name: 'Projects' }).click();
    await admin.getByRole('link', { name: 'Payments' }).click();
    await admin.getByRole('link', { name: 'Approvals' }).click();
    const own = admin.locator('li.card', { has: admin.getByRole('heading', { name: 'write_file' }) });
    await own.getByRole('button', { name: 'Approve' }).click();
    await own.getByText('approval_self_decision').waitFor();
    await admin.close();

    const reviewer = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    watch(reviewer);
    await signIn(reviewer, reviewerKey);
    // Only what an approver may do is offered.
    expect(await reviewer.locator('.who').textContent()).toBe('Tenant, approver key');
    expect(await reviewer.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).toEqual(['Projects', 'Policies']);
    expect(await reviewer.getByRole('button', { name: 'Create project' }).count()).toBe(0);
    await reviewer.getByRole('link', { name: 'Payments' }).click();
    expect(await reviewer.getByRole('navigation', { name: 'Project sections' }).getByRole('link').allTextContents()).toEqual([
      'Approvals',
      'Tools',
      'Invocation log',
    ]);
    const card = reviewer.locator('li.card', { has: reviewer.getByRole('heading', { name: 'write_file' }) });
    const args = card.getByTestId('pending-arguments');
    await args.waitFor();
    expect(JSON.parse((await args.textContent())!)).toEqual({ path: 'RELEASE.md', content });
    await card.getByLabel('Reason (optional)').fill('Checked with the release manager');
    await shot('approvals', reviewer);
    await card.getByRole('button', { name: 'Approve' }).click();
    const decision = card.getByTestId('decision');
    await decision.waitFor();
    expect(await decision.locator('p').textContent()).toMatch(/^Approved by reviewer \(key [0-9a-f-]{36}\) · outcome ok$/);
    expect(await readFile(path.join(t.workspaceOf(payments.id), 'RELEASE.md'), 'utf8')).toBe(content);
    const decided = await t.http.get(`/v1/projects/${payments.id}/invocations/${invocationId}`).set(org.auth).expect(200);
    expect(decided.body.approval).toMatchObject({
      status: 'approved',
      reason: 'Checked with the release manager',
      decidedBy: { name: 'reviewer' },
    });
    await reviewer.getByRole('button', { name: 'Refresh' }).click();
    await reviewer.getByText('No calls are waiting for approval.').waitFor();

    // Tools are listed but not tried; the settings, skills and keys pages, reached by address, say why they are not there.
    await reviewer.getByRole('link', { name: 'Tools', exact: true }).click();
    await reviewer.getByRole('heading', { name: 'read_file' }).waitFor();
    expect(await reviewer.getByRole('button', { name: 'Try it' }).count()).toBe(0);
    for (const [address, what] of [
      [`/projects/${payments.id}/settings`, 'The Settings tab'],
      ['/skills', 'Registering and listing skills'],
      ['/keys', 'Managing API keys'],
    ]) {
      await reviewer.goto(`${base}/console${address}`);
      expect(await reviewer.getByRole('alert').textContent()).toBe(`Not available to an approver key: ${what} takes an admin key.`);
    }
    expect(await reviewer.getByRole('button', { name: /Save settings|Register skill|Create key|Revoke/ }).count()).toBe(0);
    await reviewer.close();
  });

  it('signs in and moves around with the keyboard alone', async () => {
    const key = await t.http.post(`/v1/admin/tenants/${tenant.id}/api-keys`).set(t.admin).send({ name: 'keyboard' }).expect(201);
    const kb = await browser.newPage();
    await kb.goto(`${base}/console/`);
    await kb.keyboard.press('Tab'); // the sign-in kind (a radio group is one stop)
    await kb.keyboard.press('Tab'); // the key
    expect(await kb.evaluate(() => document.activeElement?.id)).toBe('token');
    await kb.keyboard.type(key.body.key as string);
    await kb.keyboard.press('Enter');
    await kb.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    // After a navigation, focus is on the new page's content, where a Tab continues.
    expect(await kb.evaluate(() => document.activeElement?.id)).toBe('main');
    await kb.keyboard.press('Tab');
    expect(await kb.evaluate(() => document.activeElement?.id)).toBe('project-name');
    // On a fresh load the first stop is the skip link, visible when focused, then the main navigation.
    await kb.reload();
    await kb.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await kb.keyboard.press('Tab');
    expect(await kb.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    expect(await kb.getByText('Skip to content').isVisible()).toBe(true);
    await kb.keyboard.press('Tab'); // Projects
    await kb.keyboard.press('Tab'); // Skills
    await kb.keyboard.press('Enter');
    await kb.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
    expect(await kb.evaluate(() => document.activeElement?.id)).toBe('main');
    await kb.close();
  });

  it('reads on a phone-sized screen', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.goto(`${base}/console/`);
    // The first key was revoked above: a fresh one, put where the sign-in page would keep it.
    const fresh = await t.http.post(`/v1/admin/tenants/${tenant.id}/api-keys`).set(t.admin).send({ name: 'phone' }).expect(201);
    await phone.evaluate(
      (token) => sessionStorage.setItem('toolgate.console.session', JSON.stringify({ kind: 'tenant', token })),
      fresh.body.key as string,
    );
    await phone.goto(`${base}/console/projects/${projectId}/tools`);
    await phone.getByRole('heading', { name: 'read_file' }).waitFor();
    // Nothing wider than the screen: no sideways scrolling of the page.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    if (SHOTS) await phone.screenshot({ path: path.join(SHOTS, 'phone-tools.png') });
    await phone.close();
  });
});
