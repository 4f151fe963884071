/// <reference lib="dom" />
// page.evaluate callbacks run in the browser.
import { chromium, type Browser } from 'playwright-core';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { chromiumPath, listen, NO_BROWSER_REASON } from './browser.js';

const describeBrowser = chromiumPath ? describe : describe.skip;
if (!chromiumPath) test.skip(`the API docs in a browser: ${NO_BROWSER_REASON}`, () => undefined);

// /docs is sent with the console's protections (a CSP that loads only this origin's scripts, no framing, no
// sniffing); Swagger UI must still work under them.
describeBrowser('the interactive API docs in a real browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    t = await createTestApp();
    base = await listen(t);
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders every operation and tries one out, with no CSP violation or script error', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const answer = await page.goto(`${base}/docs`);
    expect(answer?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.locator('#operations-health-getLiveness').waitFor();
    const operations = await page.locator('.opblock').count();
    expect(operations).toBeGreaterThanOrEqual(38);

    // "Try it out" on the liveness route calls this origin (connect-src 'self').
    await page.locator('#operations-health-getLiveness .opblock-summary').click();
    await page.getByRole('button', { name: 'Try it out' }).click();
    await page.getByRole('button', { name: 'Execute' }).click();
    await page.locator('#operations-health-getLiveness .live-responses-table .response-col_status', { hasText: '200' }).waitFor();
    expect(problems).toEqual([]);
    await page.close();
  });
});
