import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestApp } from './test-app.js';

// Debian's chromium (apt-get install chromium), or the one CHROMIUM_PATH names. Playwright's own browser
// downloads are not used: the machines reach no download host.
export const chromiumPath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (candidate): candidate is string => !!candidate && existsSync(candidate),
);

export const NO_BROWSER_REASON = 'skipped: no chromium installed (apt-get install chromium, or set CHROMIUM_PATH)';

// A suite that needs the browser; where none is installed it is skipped, and one skipped test says why.
export function describeInBrowser(name: string, what: string, body: () => void): void {
  if (!chromiumPath) test.skip(`${what}: ${NO_BROWSER_REASON}`, () => undefined);
  (chromiumPath ? describe : describe.skip)(name, body);
}

// The test app on a real port, so a real browser (and curl) can reach it.
export const baseUrl = (t: TestApp): string => `http://127.0.0.1:${t.port}`;

// Running as root in CI: Chromium's own sandbox needs an unprivileged user.
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });

// A CSP violation or a script error is a failure of the page, whatever the test goes on to see; a 4xx the
// console shows as a refusal is not. A step that does not happen fails within the test's own time.
export function watchPage(page: Page, problems: string[]): Page {
  page.setDefaultTimeout(10_000);
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return page;
}

// The console's sign-in with an API key, done once the projects page shows.
export async function signInToConsole(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
}
