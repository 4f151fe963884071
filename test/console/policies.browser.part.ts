import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { describeInBrowser, launchChromium, baseUrl, signInToConsole, watchPage } from '../support/console-browser.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

const INVALID = 'forbid (principal, action, resource) when { context.pth like "docs/*" };';
const FORBID = [
  '@id("writes-stay-in-docs")',
  '@reason("Files may only be written under docs/")',
  'forbid (principal, action == Toolgate::Action::"call", resource)',
  'when { resource.name == "write_file" && context has path && !(context.path like "docs/*") };',
].join('\n');

describeInBrowser('the console: policies and approval routes in a real browser', 'policies and approval routes in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let tenant: TestTenant;
  let projectId: string;
  let receiver: http.Server;
  let receiverUrl: string;
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  const problems: string[] = [];

  beforeAll(async () => {
    // The webhook receiver approval routes send to: it keeps what it got and answers 200.
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    receiverUrl = `http://${host}/toolgate`;
    // Loopback is refused unless the operator opens the host, as for fetch_url.
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: host } });
    base = baseUrl(t);
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant, { name: 'Handbook' })).id;
    browser = await launchChromium();
    page = watchPage(await browser.newPage({ viewport: { width: 1280, height: 900 } }), problems);
    await signInToConsole(page, base, tenant.key);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  afterEach(() => expect(problems).toEqual([]));

  const projectPolicies = () => page.locator('section', { has: page.getByRole('heading', { name: "This project's policies" }) });
  const stored = async () => (await t.http.get(`/v1/projects/${projectId}/policies`).set(tenant.auth).expect(200)).body;

  it('shows Cedar’s message next to a refused policy set, with its line and column, and keeps the text as typed', async () => {
    await page.getByRole('link', { name: 'Policies' }).click();
    await page.getByRole('heading', { name: 'Policies', level: 1 }).waitFor();
    const section = projectPolicies();
    await section.getByText('No policies set yet (version 0).').waitFor();
    await section.getByLabel('Policy set (Cedar)').fill(INVALID);
    await section.getByRole('button', { name: 'Save policies' }).click();
    const refusal = section.locator('.policy-problems');
    await refusal.waitFor();
    const direct = await t.http.put(`/v1/projects/${projectId}/policies`).set(tenant.auth).send({ text: INVALID }).expect(422);
    const [problem] = direct.body.error.details.problems as Array<{ message: string; position: { line: number; column: number } }>;
    expect(await refusal.textContent()).toContain(`line ${problem.position.line}, column ${problem.position.column}: ${problem.message}`);
    expect(problem.message).toContain('pth');
    expect(await section.getByLabel('Policy set (Cedar)').inputValue()).toBe(INVALID);
    expect(await stored()).toMatchObject({ text: '', version: 0 });
  });

  it('saves a forbid policy and shows its version and who set it', async () => {
    const section = projectPolicies();
    await section.getByLabel('Policy set (Cedar)').fill(FORBID);
    await section.getByRole('button', { name: 'Save policies' }).click();
    await section.getByRole('status').filter({ hasText: 'Saved, version 1.' }).waitFor();
    expect(await section.locator('.policy-problems').count()).toBe(0);
    expect(await section.getByTestId('policy-project-version').textContent()).toMatch(/^Version 1, set by default on /);
    expect(await stored()).toMatchObject({ text: FORBID, version: 1, setBy: { keyId: tenant.keyId, name: 'default' } });
  });

  it('tries a call and shows the forbid decision with the determining policy', async () => {
    await page.getByLabel('Tool', { exact: true }).fill('write_file');
    await page.getByLabel('Arguments (JSON)').fill(JSON.stringify({ path: 'notes.txt', content: 'hi' }));
    await page.getByLabel('As role').selectOption('agent');
    await page.getByRole('button', { name: 'Check the call' }).click();
    const decision = page.getByTestId('policy-decision');
    await decision.waitFor();
    expect(await decision.locator('.decision').textContent()).toBe('forbid');
    expect(await decision.locator('tr.determining-policy td').allTextContents()).toEqual([
      'writes-stay-in-docs',
      'project',
      'Files may only be written under docs/',
    ]);

    await page.getByLabel('Arguments (JSON)').fill(JSON.stringify({ path: 'docs/notes.md', content: 'hi' }));
    await page.getByRole('button', { name: 'Check the call' }).click();
    await decision.locator('.decision', { hasText: 'allow' }).waitFor();
    expect(await decision.locator('tr.determining-policy').count()).toBe(0);
  });

  it('adds a webhook approval route, lists it, and shows a parked call’s delivery as delivered', async () => {
    await page.goto(`${base}/console/projects/${projectId}/approvals`);
    await page.getByText('No approval routes yet.').waitFor();
    await page.getByLabel('URL', { exact: true }).fill('http://169.254.169.254/hook');
    await page.getByRole('button', { name: 'Add route' }).click();
    await page.getByRole('alert').filter({ hasText: 'approval_route_url_refused' }).waitFor();

    await page.getByLabel('URL', { exact: true }).fill(receiverUrl);
    await page.getByRole('button', { name: 'Add route' }).click();
    const shown = page.getByRole('status').filter({ hasText: 'Added the webhook route' });
    await shown.waitFor();
    expect(await shown.locator('code.secret').textContent()).toMatch(/^whsec_/);
    const route = page.locator('li.approval-route', { hasText: receiverUrl });
    await route.waitFor();
    expect(await route.locator('.hint').textContent()).toMatch(/^Signed, added .+ by default$/);
    const listed = (await t.http.get(`/v1/projects/${projectId}/approval-routes`).set(tenant.auth).expect(200)).body.items;
    expect(listed).toMatchObject([{ kind: 'webhook', url: receiverUrl, signed: true }]);

    await t.http
      .patch(`/v1/projects/${projectId}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['delete_file'] })
      .expect(200);
    const parked = await t.http
      .post(`/v1/projects/${projectId}/tools/delete_file/invoke`)
      .set(tenant.auth)
      .send({ arguments: { path: 'docs/old.md' } })
      .expect(202);
    await route.getByRole('button', { name: `Deliveries of webhook route ${receiverUrl}` }).click();
    const row = route.locator('tr.delivery', { hasText: parked.body.invocationId });
    // The worker sends it behind the answer: refresh until the row says it was delivered.
    for (let i = 0; i < 50 && !(await row.locator('.status-delivered').count()); i++) {
      await route.getByRole('button', { name: 'Refresh deliveries' }).click();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await row.locator('td').allTextContents()).toEqual([
      'approval.requested',
      parked.body.invocationId,
      'delivered',
      '1',
      '200',
      expect.any(String),
    ]);
    expect(received.map((r) => JSON.parse(r.body).data.invocationId)).toContain(parked.body.invocationId);

    await route.getByRole('button', { name: `Delete webhook route ${receiverUrl}` }).click();
    await page.getByText('No approval routes yet.').waitFor();
    await t.http.get(`/v1/projects/${projectId}/approval-routes`).set(tenant.auth).expect(200, { items: [] });
  });

  it('shows an approver the policies to read and try, with nothing to save, and no approval routes', async () => {
    const approver = watchPage(await browser.newPage({ viewport: { width: 1280, height: 900 } }), problems);
    await signInToConsole(approver, base, tenant.deciderAuth.Authorization.slice('Bearer '.length));
    await approver.getByRole('link', { name: 'Policies' }).click();
    const section = approver.locator('section', { has: approver.getByRole('heading', { name: "This project's policies" }) });
    await section.getByText('Only admin keys change policies.').waitFor();
    expect(await section.getByLabel('Policy set (Cedar)').inputValue()).toBe(FORBID);
    expect(await approver.getByRole('button', { name: 'Save policies' }).count()).toBe(0);
    await approver.getByRole('button', { name: 'Check the call' }).click();
    await approver.getByTestId('policy-decision').locator('.decision', { hasText: 'forbid' }).waitFor();

    await approver.goto(`${base}/console/projects/${projectId}/approvals`);
    await approver.getByRole('heading', { name: 'Waiting for approval' }).waitFor();
    expect(await approver.getByRole('heading', { name: 'Approval routes' }).count()).toBe(0);
    await approver.close();
  });
});
