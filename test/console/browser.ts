import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from '../support/test-app.js';

// Debian's chromium (apt-get install chromium), or the one CHROMIUM_PATH names. Playwright's own browser
// downloads are not used: the machines reach no download host.
export const chromiumPath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (candidate): candidate is string => !!candidate && existsSync(candidate),
);

export const NO_BROWSER_REASON = 'skipped: no chromium installed (apt-get install chromium, or set CHROMIUM_PATH)';

// The test app on a real port, so a real browser (and curl) can reach it.
export async function listen(t: TestApp): Promise<string> {
  const server = t.app.getHttpServer() as Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
