import { readdirSync } from 'node:fs';
import path from 'node:path';
import { CONSOLE_DIR } from '../../src/http/console-static.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

// The console's files as the service serves them (npm test builds them first, through pretest).
describe('the console at /console', () => {
  let t: TestApp;
  const assets = readdirSync(path.join(CONSOLE_DIR, 'assets'));
  const script = assets.find((name) => name.endsWith('.js'))!;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers index.html without a key, never cached without revalidation, under a strict CSP', async () => {
    const res = await t.http.get('/console/').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.text).toContain(`/console/assets/${script}`);
    // No inline script: every <script> has a src.
    expect(res.text.match(/<script\b[^>]*>/g)!.every((tag) => tag.includes(' src='))).toBe(true);
  });

  it('answers the app for any page under /console, so a reload or a shared link works', async () => {
    const index = (await t.http.get('/console/').expect(200)).text;
    for (const page of ['/console', '/console/projects', '/console/projects/0b6c/log', '/console/admin/health?x=1']) {
      const res = await t.http.get(page).expect(200);
      expect(res.text).toBe(index);
      expect(res.headers['cache-control']).toBe('no-cache');
    }
  });

  it('serves hashed assets as immutable for a year, with their content type', async () => {
    const res = await t.http.get(`/console/assets/${script}`).expect(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const css = assets.find((name) => name.endsWith('.css'))!;
    expect((await t.http.get(`/console/assets/${css}`).expect(200)).headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('answers a missing asset 404, not the page (a browser would cache HTML as the script)', async () => {
    const res = await t.http.get('/console/assets/index-missing.js').expect(404);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('answers nothing outside its build directory for an escaping path', async () => {
    const res = await t.http.get('/console/..%2f..%2fpackage.json');
    expect(res.text).not.toContain('"name": "toolgate"');
    const dotted = await t.http.get('/console/assets/..%2f..%2f..%2fpackage.json');
    expect(dotted.status).toBe(404);
  });

  it('answers HEAD with the headers a GET has, the length included', async () => {
    const head = await t.http.head(`/console/assets/${script}`).expect(200);
    const get = await t.http.get(`/console/assets/${script}`).expect(200);
    expect(head.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
  });

  it('leaves the API behind its authentication', async () => {
    await t.http.get('/v1/projects').expect(401);
    await t.http.get('/consoles').expect(404);
  });
});
