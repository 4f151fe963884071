import { jest } from '@jest/globals';
import { wrapPglite } from '../../src/database/pglite-driver.js';
import { createTestApp } from '../support/test-app.js';
import { createPglite } from '../support/test-database.js';

// The quickstart: a first start on an empty embedded database with no ADMIN_TOKEN prints a key once.
describe('first start on an empty embedded database', () => {
  it('creates tenant default, prints its key once, and the key works; a second start prints nothing', async () => {
    const db = await createPglite({ migrated: false });
    const database = { driver: wrapPglite(db, 'memory'), url: null, close: () => Promise.resolve() };
    // The app closes the driver on shutdown; keep the PGlite open for the second start.
    database.driver.close = () => Promise.resolve();
    const printed: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      const first = await createTestApp({ env: { ADMIN_TOKEN: '', NODE_ENV: 'development' }, database });
      const key = /tg_[0-9a-f]{12}_[0-9a-f]{64}/.exec(printed.join(''))?.[0];
      expect(key).toBeDefined();
      await first.http
        .get('/v1/projects')
        .set({ Authorization: `Bearer ${key}` })
        .expect(200);
      expect(JSON.stringify(first.logs)).not.toContain(key);
      await first.close();

      printed.length = 0;
      const second = await createTestApp({ env: { ADMIN_TOKEN: '', NODE_ENV: 'development' }, database });
      expect(printed.join('')).not.toMatch(/tg_[0-9a-f]{12}_/);
      await second.close();
    } finally {
      spy.mockRestore();
      await db.close();
    }
  });

  it('does nothing when an admin token is configured', async () => {
    const printed: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      const app = await createTestApp();
      const tenants = await app.http.get('/v1/admin/tenants').set(app.admin).expect(200);
      expect(tenants.body.items).toEqual([]);
      await app.close();
    } finally {
      spy.mockRestore();
    }
    expect(printed.join('')).not.toMatch(/tg_[0-9a-f]{12}_/);
  });
});
