import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describeInBrowser, launchChromium, baseUrl, signInToConsole, watchPage } from '../support/console-browser.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

describeInBrowser('the console: a project’s toolset editor in a real browser', 'the toolset editor in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let tenant: TestTenant;
  let projectId: string;
  const problems: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
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
  });

  afterEach(() => expect(problems).toEqual([]));

  const toolset = (slug: string) => t.http.get(`/v1/projects/${projectId}/toolsets/${slug}`).set(tenant.auth);

  it('creates a toolset from the form and lists the tools the model can call', async () => {
    await page.goto(`${base}/console/projects/${projectId}/toolsets`);
    await page.getByRole('link', { name: 'Toolsets' }).waitFor();
    await page.getByText('No toolsets yet.').waitFor();
    await page.getByLabel('Slug').fill('docs-reader');
    await page.getByLabel('Name').fill('Docs reader');
    // The form starts with an example: read_file as read_doc over docs/, fetch_url for GET only, the listing tools.
    await page.getByRole('button', { name: 'Create toolset' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved docs-reader' }).waitFor();
    const row = page.locator('tr.toolset-row', { hasText: 'docs-reader' });
    expect(await row.locator('td.exposed-tools').textContent()).toBe('read_doc, fetch_url, list_files');
    const stored = (await toolset('docs-reader').expect(200)).body;
    expect(stored).toMatchObject({ name: 'Docs reader', mode: 'direct', exposedTools: ['read_doc', 'fetch_url', 'list_files'] });
  });

  it('shows a rename that collides with a built-in, and what it collides with', async () => {
    await page.getByRole('button', { name: 'Edit toolset docs-reader' }).click();
    await page.getByRole('heading', { name: 'Edit toolset docs-reader' }).waitFor();
    await page.getByLabel('Tools (JSON)').fill(JSON.stringify([{ select: 'read_file', name: 'write_file' }]));
    await page.getByRole('button', { name: 'Save toolset' }).click();
    await page.getByRole('alert').filter({ hasText: 'tool_name_collision' }).waitFor();
    expect(await page.locator('ul.collisions').textContent()).toContain('write_file is already provided by the built-in tools');
    expect((await toolset('docs-reader').expect(200)).body.exposedTools).toEqual(['read_doc', 'fetch_url', 'list_files']);
  });

  it('edits a toolset into search mode and deletes it', async () => {
    await page.getByLabel('Tools (JSON)').fill(JSON.stringify([{ select: '@all' }]));
    await page.getByLabel('Mode').selectOption('search');
    await page.getByRole('button', { name: 'Save toolset' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved docs-reader' }).waitFor();
    await page.locator('tr.toolset-row', { hasText: 'search' }).waitFor();
    expect((await toolset('docs-reader').expect(200)).body).toMatchObject({ mode: 'search', tools: [{ select: '@all' }] });
    const listing = await t.http.get(`/v1/projects/${projectId}/toolsets/docs-reader/tools`).set(tenant.auth).expect(200);
    expect(listing.body.tools.map((tool: { name: string }) => tool.name)).toEqual(['search_tools', 'call_tool']);

    await page.getByRole('button', { name: 'Delete toolset docs-reader' }).click();
    await page.getByText('No toolsets yet.').waitFor();
    await page.getByRole('heading', { name: 'New toolset' }).waitFor();
    await toolset('docs-reader').expect(404);
  });

  it('shows an approver a call made through a toolset: the toolset, the name the model used, and the paths that will be written', async () => {
    await mkdir(path.join(t.workspaceOf(projectId), 'notes'), { recursive: true });
    await t.http
      .post(`/v1/projects/${projectId}/toolsets`)
      .set(tenant.auth)
      .send({
        slug: 'filing',
        name: 'Filing',
        mode: 'direct',
        tools: [{ select: 'write_file', name: 'file_note', pathPrefix: 'notes', fixedArguments: { createDirs: true } }],
      })
      .expect(201);
    await t.http
      .patch(`/v1/projects/${projectId}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['@writes'] })
      .expect(200);
    await t.http
      .post(`/v1/projects/${projectId}/toolsets/filing/tools/file_note/invoke`)
      .set(tenant.auth)
      .send({ arguments: { path: 'today.md', content: 'hi' } })
      .expect(202);

    await page.goto(`${base}/console/projects/${projectId}/approvals`);
    const card = page.locator('li.card', { has: page.getByRole('heading', { name: 'write_file' }) });
    const args = card.getByTestId('pending-arguments');
    await args.waitFor();
    expect(await card.locator('.tool-head .hint').textContent()).toMatch(/^through toolset filing as file_note, asked /);
    expect(await card.locator('p.hint', { hasText: 'Arguments exactly as they will run' }).textContent()).toContain(
      'the toolset confines this tool to notes/',
    );
    expect(JSON.parse((await args.textContent())!)).toEqual({ path: 'notes/today.md', content: 'hi', createDirs: true });
  });

  it('names the toolset when a skill is refused for a name the toolset gives', async () => {
    await t.http
      .post(`/v1/projects/${projectId}/toolsets`)
      .set(tenant.auth)
      .send({ slug: 'lookups', name: 'Lookups', mode: 'direct', tools: [{ select: 'read_file', name: 'lookup' }] })
      .expect(201);
    const skill = {
      name: 'finder',
      version: '1.0.0',
      description: 'Finds things',
      tools: [
        {
          name: 'lookup',
          description: 'Looks a word up',
          inputSchema: { type: 'object', properties: {} },
          executor: { type: 'http', url: 'https://example.com/lookup' },
        },
      ],
    };
    await t.http.post('/v1/skills').set(tenant.auth).send(skill).expect(201);
    await page.goto(`${base}/console/projects/${projectId}/skills`);
    await page.getByLabel('Skill to enable').selectOption({ label: 'finder@1.0.0' });
    await page.getByRole('button', { name: 'Enable skill' }).click();
    await page.getByText('tool_name_collision').waitFor();
    expect(await page.locator('.collisions').textContent()).toBe(
      'lookup is already the name toolset lookups shows read_file under (rename it there to free the name)',
    );
  });
});
