import { randomBytes } from 'node:crypto';
import { ApprovalsService } from '../../src/calls/approvals.service.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { invoke } from './security-helpers.js';

// Two ways one tenant's admin key took the service's event loop and database from the others: registering
// large skills (each schema compiled on the event loop, no limit on how many or how large), and parking
// calls with large arguments (stored outside every budget). Each attack runs here against the real service
// while another tenant's GET /health/live is timed, alone and during the attack: the ratio is printed and
// bounded, not an absolute time.

const MiB = 1024 * 1024;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

type Refusal = { error: { code: string; message: string; details: { budget: string; limit: number; inUse: number; asked: number } } };

// A skill of `tools` command tools, each with a long description and four described parameters.
function skillBody(name: string, tools: number, descriptionBytes: number, parameterBytes: number) {
  const words = (bytes: number, salt: number) => `${salt} ${'lorem '.repeat(Math.floor(bytes / 6))}`.slice(0, bytes);
  return {
    name,
    version: '1.0.0',
    description: 'many tools',
    tools: Array.from({ length: tools }, (_, i) => ({
      name: `tool_${i}`,
      description: words(descriptionBytes, i),
      inputSchema: {
        type: 'object',
        properties: Object.fromEntries(
          ['a', 'b', 'c', 'd'].map((p) => [p, { type: 'string', maxLength: 64, description: words(parameterBytes, i) }]),
        ),
        required: ['a'],
      },
      executor: { type: 'command', argv: ['echo', '{{a}}'] },
    })),
  };
}

describe('registration and parking do not take the service from other tenants', () => {
  let t: TestApp;
  let neighbour: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    neighbour = await t.createTenant();
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  }, 60_000);

  const usage = async (who: TestTenant) =>
    (await t.http.get('/v1/usage').set(who.auth).expect(200)).body as { budgets: Record<string, number>; usage: Record<string, number> };

  // The neighbour's /health/live, one request after another, until `done` says stop (or `count` alone).
  async function liveTimes(until: () => boolean, least: number): Promise<number[]> {
    const times: number[] = [];
    while (times.length < least || !until()) {
      const started = performance.now();
      await t.http.get('/health/live').set(neighbour.auth).expect(200);
      times.push(performance.now() - started);
      if (times.length > 2000) break;
    }
    return times;
  }

  // Median during over median alone, with a floor of 20 ms under the latter: a 3 ms answer is not judged on
  // scheduler noise. Printed with the figures.
  function ratio(label: string, alone: number[], during: number[]): number {
    // A floor of 50 ms under the unloaded median: scheduler noise on a shared machine is not the attack.
    const r = median(during) / Math.max(median(alone), 50);
    process.stdout.write(
      `${label}: neighbour /health/live alone p50 ${median(alone).toFixed(1)} ms max ${Math.max(...alone).toFixed(1)} ms; during p50 ${median(during).toFixed(1)} ms max ${Math.max(...during).toFixed(1)} ms (${during.length} requests); ratio ${r.toFixed(2)}\n`,
    );
    return r;
  }

  it('refuses skills past maxSkills and past the size cap, vets them off the event loop one registration of a tenant at a time, and the neighbour keeps answering', async () => {
    const attacker = await t.createTenant();
    await t.setBudgets(attacker, { maxSkills: 3 });
    // The attack as reported: 100 tools, 4 KB descriptions, 4 x 1 KB parameter descriptions (about 830 KB).
    const huge = skillBody('huge', 100, 4096, 1024);
    expect(JSON.stringify(huge).length).toBeGreaterThan(800 * 1024);
    // Under the cap (256 KiB of tools): 100 tools whose schemas still cost an Ajv compile each.
    const under = (i: number) => skillBody(`under-${i}`, 100, 1200, 200);
    expect(JSON.stringify(under(0).tools).length).toBeLessThan(256 * 1024);

    const alone = await liveTimes(() => true, 15);
    let finished = false;
    const attack = (async () => {
      const tooLarge = await Promise.all(Array.from({ length: 4 }, () => t.http.post('/v1/skills').set(attacker.auth).send(huge)));
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => t.http.post('/v1/skills').set(attacker.auth).send(under(i))));
      return { tooLarge, burst };
    })().finally(() => (finished = true));
    const during = await liveTimes(() => finished, 5);
    const { tooLarge, burst } = await attack;

    // Too large: refused before anything was compiled or stored.
    expect(tooLarge.map((r) => r.status)).toEqual([413, 413, 413, 413]);
    expect(tooLarge[0].body.error).toMatchObject({ code: 'skill_too_large', details: { limit: 256 * 1024 } });
    // Twenty at once: one vetted at a time with sixteen waiting; the others were told to come back.
    const statuses = burst.map((r) => r.status);
    const busy = burst.filter((r) => r.status === 429);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0].headers['retry-after']).toBe('2');
    expect(busy[0].body.error.code).toBe('skill_registrations_busy');
    // Of those vetted, three fit in maxSkills; the rest were refused naming the budget.
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    const overBudget = burst.filter((r) => r.status === 403);
    expect(overBudget.length).toBe(20 - 3 - busy.length);
    expect((overBudget[0].body as Refusal).error).toMatchObject({
      code: 'tenant_budget_exceeded',
      details: { budget: 'maxSkills', limit: 3, inUse: 3, asked: 1 },
    });
    const seen = await usage(attacker);
    expect(seen.budgets.maxSkills).toBe(3);
    expect(seen.usage.maxSkills).toBe(3);
    const listed = await t.http.get('/v1/skills').query({ limit: 100 }).set(attacker.auth).expect(200);
    expect(listed.body.items).toHaveLength(3);

    expect(ratio('skill registrations', alone, during)).toBeLessThan(4);

    // A registered tool's validator, compiled on its first call, still refuses bad arguments.
    const skill = burst.find((r) => r.status === 201)!.body as { id: string };
    const project = (await t.createProject(attacker)).id;
    await t.http.post(`/v1/projects/${project}/skills`).set(attacker.auth).send({ skillId: skill.id }).expect(201);
    const bad = await invoke(t, attacker, project, 'tool_7', { a: 'x'.repeat(100) });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('invalid_arguments');
  }, 240_000);

  it("[sec-105] counts parked calls' arguments against storedAnswerBytes: past it nothing is parked or run, and a decision gives the room back", async () => {
    const parker = await t.createTenant();
    await t.setBudgets(parker, { storedAnswerBytes: 1.5 * MiB });
    const project = (await t.createProject(parker, { approvalRequired: ['write_file'] })).id;
    // 512 KiB of random text (about what a request may carry): sealed and stored once, about 0.7 MB a parked call.
    const content = () => randomBytes(384 * 1024).toString('base64');

    const alone = await liveTimes(() => true, 15);
    let finished = false;
    const attack = (async () => {
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push(await invoke(t, parker, project, 'write_file', { path: `f${i}.txt`, content: content() }));
      return answers;
    })().finally(() => (finished = true));
    const during = await liveTimes(() => finished, 5);
    const answers = await attack;

    expect(answers.map((r) => r.status)).toEqual([202, 202, 403, 403, 403, 403]);
    const refusal = (answers[2].body as Refusal).error;
    expect(refusal).toMatchObject({ code: 'tenant_budget_exceeded', details: { budget: 'storedAnswerBytes', limit: 1.5 * MiB } });
    expect(refusal.details.inUse + refusal.details.asked).toBeGreaterThan(1.5 * MiB);
    expect(refusal.message).toMatch(/Nothing was parked and nothing ran/);
    // The budget is shown in use, and never past it.
    const held = (await usage(parker)).usage.storedAnswerBytes;
    expect(held).toBeGreaterThan(MiB);
    expect(held).toBeLessThanOrEqual(1.5 * MiB);
    // Nothing of the refused calls was parked: two rows wait, and no file was written.
    const rows = await t.database.driver.query<{ status: string }>(`SELECT status FROM parked_calls WHERE tenant_id = $1`, [parker.id]);
    expect(rows.map((r) => r.status)).toEqual(['pending', 'pending']);

    // Each park still writes its sealed arguments (0.7 MB) through the embedded database on this thread;
    // before, the sealing alone took about 100 ms of the loop a call here and the neighbour's median went up
    // twelvefold.
    expect(ratio('[sec-105] parked calls', alone, during)).toBeLessThan(5);

    // A denial drops the stored arguments: the count comes down to the small outcome, and a call parks again.
    const first = answers[0].body.invocationId as string;
    await t.http.post(`/v1/projects/${project}/invocations/${first}/deny`).set(parker.deciderAuth).send({ reason: 'no' }).expect(200);
    const after = (await usage(parker)).usage.storedAnswerBytes;
    expect(after).toBeLessThan(held - 0.5 * MiB);
    const again = await invoke(t, parker, project, 'write_file', { path: 'g.txt', content: content() });
    expect(again.status).toBe(202);
  }, 240_000);

  it('[sec-105] decided parked calls go once their outcome is older than a stored answer is kept, and stop counting', async () => {
    const parker = await t.createTenant();
    const project = (await t.createProject(parker, { approvalRequired: ['write_file'] })).id;
    const park = async (name: string) => {
      const answer = await invoke(t, parker, project, 'write_file', { path: name, content: randomBytes(96 * 1024).toString('base64') });
      expect(answer.status).toBe(202);
      return answer.body.invocationId as string;
    };
    const [approved, denied, recent, waiting] = [await park('a.txt'), await park('b.txt'), await park('c.txt'), await park('d.txt')];
    const decide = (id: string, how: 'approve' | 'deny') =>
      t.http.post(`/v1/projects/${project}/invocations/${id}/${how}`).set(parker.deciderAuth).send({ reason: 'checked' }).expect(200);
    await decide(approved, 'approve');
    await decide(denied, 'deny');
    await decide(recent, 'deny');
    const before = (await usage(parker)).usage.storedAnswerBytes;

    // Two decisions taken a day and an hour ago (IDEMPOTENCY_TTL_HOURS is 24 here); the third just now, the fourth waits.
    const day = 24 * 3_600_000 + 3_600_000;
    await t.database.driver.query(`UPDATE parked_calls SET decided_at = now() - make_interval(secs => $2) WHERE id = ANY($1::uuid[])`, [
      [approved, denied],
      day / 1000,
    ]);
    await t.app.get(ApprovalsService).expireDue();

    const rows = await t.database.driver.query<{ id: string; status: string }>(
      `SELECT id, status FROM parked_calls WHERE tenant_id = $1 ORDER BY started_at`,
      [parker.id],
    );
    expect(rows.map((r) => [r.id, r.status])).toEqual([
      [recent, 'denied'],
      [waiting, 'pending'],
    ]);
    // Their stored arguments and outcomes no longer count; the waiting call's arguments still do.
    const after = (await usage(parker)).usage.storedAnswerBytes;
    expect(after).toBeLessThan(before);
    expect(after).toBeGreaterThan(96 * 1024);
    // The audit keeps what happened; a decision on a pruned call finds nothing to decide.
    const audited = (await t.http.get(`/v1/projects/${project}/invocations/${approved}`).set(parker.auth).expect(200)).body;
    expect(audited).toMatchObject({ id: approved, tool: 'write_file', status: 'ok' });
    const again = await t.http.post(`/v1/projects/${project}/invocations/${denied}/approve`).set(parker.deciderAuth).send({});
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('approval_not_found');
  }, 120_000);
});
