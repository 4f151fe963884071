/// <reference lib="dom" />
// page.evaluate callbacks run in the browser.
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { chromiumPath, listen, NO_BROWSER_REASON } from './browser.js';

const run = promisify(execFile);
// CONSOLE_SCREENSHOTS=1 writes the pages this walk passes through to docs/console/ (the README shows them).
const SHOTS = process.env.CONSOLE_SCREENSHOTS ? path.resolve('docs/console') : undefined;

const describeBrowser = chromiumPath ? describe : describe.skip;
if (!chromiumPath) test.skip(`the console in a browser: ${NO_BROWSER_REASON}`, () => undefined);

describeBrowser('the console in a real browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let tenant: TestTenant;
  let projectId: string;
  let laptopKey: string;
  const problems: string[] = [];

  const shot = async (name: string) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  beforeAll(async () => {
    t = await createTestApp();
    base = await listen(t);
    tenant = await t.createTenant('acme');
    // Running as root in CI: Chromium's own sandbox needs an unprivileged user.
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    // A step that does not happen fails within the test's own time, with the step named.
    page.setDefaultTimeout(10_000);
    // A CSP violation or a script error is a failure of the page, whatever the test goes on to see.
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
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
    await page.getByRole('link', { name: 'Tools' }).click();
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
    const direct = await t.http.post(`/v1/projects/${projectId}/tools/read_file/invoke`).set(tenant.auth).send({ arguments: {} }).expect(422);
    expect(await answer.locator('.model-message').textContent()).toBe(direct.body.error.message);
    expect(await answer.textContent()).toContain('invalid_arguments');
    await shot('tool-try-it');
  });

  it('shows in the live tail a call made with curl, and lists it in the log with filters', async () => {
    await page.getByRole('link', { name: 'Invocation log' }).click();
    await page.getByText('connected', { exact: true }).waitFor();
    // Outside the browser: an agent's call, made with curl.
    await run('curl', [
      '-sS', '-X', 'POST', `${base}/v1/projects/${projectId}/tools/list_files/invoke`,
      '-H', `Authorization: Bearer ${tenant.key}`, '-H', 'content-type: application/json', '-d', '{"arguments":{"path":"."}}',
    ]);
    const tail = page.getByRole('list', { name: 'Tool events, newest first' });
    await tail.getByText('tool.completed').waitFor();
    expect(await tail.textContent()).toContain('list_files');

    // The audit log is written behind the answers: wait until the curl call is in it.
    const audited = async (query: string) => (await t.http.get(`/v1/projects/${projectId}/invocations?${query}`).set(tenant.auth).expect(200)).body.items as unknown[];
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
      tools: [{ name: 'say_hello', description: 'Prints a greeting', inputSchema: { type: 'object', properties: {} }, executor: { type: 'command', argv: ['echo', 'hello'] } }],
    };
    await page.getByLabel('Skill (JSON)').fill(JSON.stringify(skill, null, 2));
    await page.getByRole('button', { name: 'Register skill' }).click();
    await page.getByRole('status').filter({ hasText: 'greeter@1.0.0' }).waitFor();
    // A second skill whose tool takes a built-in's name.
    await page.getByLabel('Skill (JSON)').fill(JSON.stringify({ ...skill, name: 'shadow', tools: [{ ...skill.tools[0], name: 'read_file' }] }));
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
    await t.http.get('/v1/projects').set({ Authorization: `Bearer ${laptopKey}` }).expect(200);
    await page.getByRole('cell', { name: 'laptop', exact: true }).waitFor();
    await shot('api-keys');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: /^Revoke key default/ }).click();
    await page.getByText('You revoked the key you were signed in with.').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('toolgate.console.session'))).toBeNull();
    await t.http.get('/v1/projects').set(tenant.auth).expect(401);
  });

  it("lets the operator list tenants and their keys, issue and revoke a key, and read the health page", async () => {
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
    await t.http.get('/v1/projects').set({ Authorization: `Bearer ${issued}` }).expect(200);

    await acme.getByRole('button', { name: /^Revoke key laptop/ }).click();
    await page.waitForFunction(() => !document.body.textContent.includes('laptop'));
    await t.http.get('/v1/projects').set({ Authorization: `Bearer ${laptopKey}` }).expect(401);

    await page.getByRole('link', { name: 'Health' }).click();
    await page.getByText('Command sandbox').waitFor();
    const ready = (await t.http.get('/health/ready').expect(200)).body as { commandSandbox: { mode: string }; auditQueue: { capacity: number } };
    const facts = await page.locator('.facts').textContent();
    expect(facts).toContain(ready.commandSandbox.mode);
    expect(facts).toMatch(new RegExp(`Audit queue\\d+ waiting of ${ready.auditQueue.capacity}`));
    await shot('operator-health');
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
    await phone.evaluate((token) => sessionStorage.setItem('toolgate.console.session', JSON.stringify({ kind: 'tenant', token })), fresh.body.key as string);
    await phone.goto(`${base}/console/projects/${projectId}/tools`);
    await phone.getByRole('heading', { name: 'read_file' }).waitFor();
    // Nothing wider than the screen: no sideways scrolling of the page.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    if (SHOTS) await phone.screenshot({ path: path.join(SHOTS, 'phone-tools.png') });
    await phone.close();
  });
});
