import { AuditTrail } from './security-helpers.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md, case 105: the database through the audit. Every call has its row, refused or not,
// and a row keeps up to AUDIT_ARGUMENTS_MAX_BYTES of arguments: one tenant calling at its rate limit with 8 KiB
// of arguments grew the database by about 11 MB a minute, kept AUDIT_RETENTION_DAYS. The auditBytesPerDay
// budget holds the text its rows keep in full; past it every call still has its row, with short previews.

const MiB = 1024 * 1024;
const ARGUMENT_BYTES = 7 * 1024;

interface Usage {
  budgets: { auditBytesPerDay: number };
  usage: { auditBytesPerDay: number };
}

describe('[sec-105] audit rows past auditBytesPerDay', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t?.close();
  }, 60_000);

  // Batches of 32 calls refused as invalid (an unknown parameter of 7 KiB), each audited with its arguments.
  const invalidBatches = async (tenant: TestTenant, projectId: string, batches: number) => {
    for (let b = 0; b < batches; b++) {
      const calls = Array.from({ length: 32 }, (_, i) => ({
        id: `c${i}`,
        tool: 'read_file',
        arguments: { path: 'a.txt', junk: `${b}-${i}-`.padEnd(ARGUMENT_BYTES, 'x') },
      }));
      const res = await t.http.post(`/v1/projects/${projectId}/tools/batch`).set(tenant.auth).send({ calls }).expect(200);
      expect((res.body.results as Array<{ status: string }>).every((r) => r.status === 'invalid_arguments')).toBe(true);
    }
  };
  const usage = async (tenant: TestTenant) => (await t.http.get('/v1/usage').set(tenant.auth).expect(200)).body as Usage;
  const textBytes = (row: { arguments: unknown; errorMessage: string | null }) =>
    JSON.stringify(row.arguments ?? null).length + (row.errorMessage?.length ?? 0);

  it("[sec-105] keeps a tenant's rows' text in full up to auditBytesPerDay, then previews; every call keeps its row; another tenant's rows are whole", async () => {
    const spender = await t.createTenant();
    const other = await t.createTenant();
    await t.setBudgets(spender, { auditBytesPerDay: MiB });
    const project = (await t.createProject(spender)).id;
    const otherProject = (await t.createProject(other)).id;

    // 8 batches: 256 calls of about 7.5 KiB of text each, about 1.9 MiB against a budget of 1 MiB.
    await invalidBatches(spender, project, 8);
    await invalidBatches(other, otherProject, 1);

    const rows = await new AuditTrail(t, spender, project).rows();
    expect(rows).toHaveLength(256);
    expect(rows.every((r) => r.status === 'invalid_arguments')).toBe(true);
    const whole = rows.filter((r) => !r.argumentsTruncated);
    const previews = rows.filter((r) => r.argumentsTruncated);
    const kept = rows.reduce((sum, r) => sum + textBytes(r), 0);
    process.stderr.write(
      `[sec-105] audit text: ${whole.length} rows whole, ${previews.length} previews, ${(kept / MiB).toFixed(2)} MiB kept for ${((256 * ARGUMENT_BYTES) / MiB).toFixed(2)} MiB of arguments (auditBytesPerDay 1 MiB)\n`,
    );
    // The whole rows' text fills the budget to within one row; the rest are previews of a few hundred bytes,
    // still saying what was wrong.
    const wholeBytes = whole.reduce((sum, r) => sum + textBytes(r), 0);
    expect(wholeBytes).toBeLessThanOrEqual(MiB);
    expect(wholeBytes).toBeGreaterThan(MiB - textBytes(whole[0]));
    expect(previews.length).toBe(256 - whole.length);
    for (const row of previews) {
      expect(JSON.stringify(row.arguments).length).toBeLessThan(300);
      expect(row.errorMessage!.length).toBeLessThanOrEqual(257);
      expect(row.errorMessage).toMatch(/junk/);
    }
    expect(kept).toBeLessThan(MiB + 130 * 1024);

    const own = await usage(spender);
    expect(own.budgets.auditBytesPerDay).toBe(MiB);
    expect(own.usage.auditBytesPerDay).toBeGreaterThan(MiB - 10 * 1024);
    expect(own.usage.auditBytesPerDay).toBeLessThanOrEqual(MiB);

    // The other tenant's rows are whole, on its own default.
    const others = await new AuditTrail(t, other, otherProject).rows();
    expect(others).toHaveLength(32);
    expect(others.every((r) => !r.argumentsTruncated)).toBe(true);
    expect((await usage(other)).usage.auditBytesPerDay).toBeGreaterThan(32 * ARGUMENT_BYTES);

    // The operator raises the figure: whole rows again, at once.
    await t.setBudgets(spender, { auditBytesPerDay: 16 * MiB });
    const trail = new AuditTrail(t, spender, project);
    await trail.fresh('invalid_arguments');
    await invalidBatches(spender, project, 1);
    const after = await trail.fresh('invalid_arguments');
    expect(after).toHaveLength(32);
    expect(after.every((r) => !r.argumentsTruncated)).toBe(true);
  }, 120_000);
});
