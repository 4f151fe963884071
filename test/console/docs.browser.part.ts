/// <reference lib="dom" />
// page.evaluate callbacks run in the browser.
import type { Browser } from 'playwright-core';
import { describeInBrowser, launchChromium, baseUrl } from '../support/console-browser.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

// /docs is sent with the console's protections (a CSP that loads only this origin's scripts, no framing, no
// sniffing); Swagger UI must still work under them.
describeInBrowser('the interactive API docs in a real browser', 'the API docs in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    t = await createTestApp();
    base = baseUrl(t);
    browser = await launchChromium();
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
