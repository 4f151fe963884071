import { existsSync } from 'node:fs';
import { listen as listenOnPort } from '../e2e/tools/tool-test-kit.js';
import type { TestApp } from '../support/test-app.js';

// Debian's chromium (apt-get install chromium), or the one CHROMIUM_PATH names. Playwright's own browser
// downloads are not used: the machines reach no download host.
export const chromiumPath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (candidate): candidate is string => !!candidate && existsSync(candidate),
);

export const NO_BROWSER_REASON = 'skipped: no chromium installed (apt-get install chromium, or set CHROMIUM_PATH)';

// The test app on a real port, so a real browser (and curl) can reach it.
export const listen = async (t: TestApp): Promise<string> => `http://127.0.0.1:${await listenOnPort(t)}`;
