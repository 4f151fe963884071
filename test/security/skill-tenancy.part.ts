import type { Response } from 'supertest';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import {
  callTool,
  commandTool,
  enableSkill,
  expectError,
  installSkill,
  listSkills,
  postSkill,
  type RegisteredSkill,
  skillOf,
  STRING_ARG,
  toolNames,
} from '../e2e/skills/skill-test-kit.js';

const MISSING = '7d9f1a3c-52b4-4c1e-9a6f-0b8e2d4c6a10';

// The answer with the request id left out (it differs per request), as text: what "the same bytes" means here.
const bytesOf = (res: Response) => {
  const { requestId, ...rest } = res.body as { requestId: string };
  expect(requestId).toEqual(expect.any(String));
  return `${res.status} ${JSON.stringify(rest)}`;
};

describe('skills across tenants', () => {
  let t: TestApp;
  let alice: TestTenant;
  let bob: TestTenant;
  let aliceProject: string;
  let bobProject: string;
  let aliceSkill: RegisteredSkill;
  let bobSkill: RegisteredSkill;

  const printTool = (name: string, tag: string) => commandTool(name, ['printf', `${tag}:%s`, '{{word}}'], STRING_ARG('word'));

  beforeAll(async () => {
    t = await createTestApp();
    [alice, bob] = [await t.createTenant(), await t.createTenant()];
    aliceProject = (await t.createProject(alice, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
    bobProject = (await t.createProject(bob, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
    aliceSkill = await installSkill(t, alice, aliceProject, skillOf([printTool('alice_tool', 'alice')]));
    bobSkill = await installSkill(t, bob, bobProject, skillOf([printTool('bob_tool', 'bob')]));
  });
  afterAll(() => t.close());

  // Bob's request for Alice's resource must answer exactly what his request for a missing id answers.
  async function expectSameAsMissing(theirs: Response, missing: Response, theirId: string, status: number, code: string) {
    expectError(missing, status, code);
    expect(bytesOf(theirs).replaceAll(theirId, MISSING)).toBe(bytesOf(missing));
  }

  async function aliceSkillIsIntact() {
    const res = await t.http.get(`/v1/skills/${aliceSkill.id}`).set(alice.auth).expect(200);
    expect({ version: res.body.version, tools: res.body.tools }).toEqual({ version: '1.0.0', tools: aliceSkill.tools });
    expect(await toolNames(t, alice, aliceProject)).toContain('alice_tool');
  }

  it("[sec-40] GET /v1/skills/:skillId answers another tenant's skill like a missing one", async () => {
    await expectSameAsMissing(
      await t.http.get(`/v1/skills/${aliceSkill.id}`).set(bob.auth),
      await t.http.get(`/v1/skills/${MISSING}`).set(bob.auth),
      aliceSkill.id,
      404,
      'skill_not_found',
    );
  });

  it("[sec-40] PUT /v1/skills/:skillId answers another tenant's skill like a missing one and changes nothing", async () => {
    const body = skillOf([printTool('hijacked', 'bob')], { name: aliceSkill.name, version: '6.6.6' });
    await expectSameAsMissing(
      await t.http.put(`/v1/skills/${aliceSkill.id}`).set(bob.auth).send(body),
      await t.http.put(`/v1/skills/${MISSING}`).set(bob.auth).send(body),
      aliceSkill.id,
      404,
      'skill_not_found',
    );
    await aliceSkillIsIntact();
  });

  it("[sec-40] DELETE /v1/skills/:skillId answers another tenant's skill like a missing one and deletes nothing", async () => {
    await expectSameAsMissing(
      await t.http.delete(`/v1/skills/${aliceSkill.id}`).set(bob.auth),
      await t.http.delete(`/v1/skills/${MISSING}`).set(bob.auth),
      aliceSkill.id,
      404,
      'skill_not_found',
    );
    await aliceSkillIsIntact();
  });

  it("[sec-40] POST /v1/projects/:projectId/skills with another tenant's skill id in the body answers like a missing skill", async () => {
    await expectSameAsMissing(
      await enableSkill(t, bob, bobProject, aliceSkill.id),
      await enableSkill(t, bob, bobProject, MISSING),
      aliceSkill.id,
      404,
      'skill_not_found',
    );
    expect(await toolNames(t, bob, bobProject)).not.toContain('alice_tool');
    expectError(await callTool(t, bob, bobProject, 'alice_tool', { word: 'x' }), 404, 'tool_not_found');
  });

  it("[sec-40] POST /v1/projects/:projectId/skills with another tenant's project in the path answers like a missing project", async () => {
    await expectSameAsMissing(
      await enableSkill(t, bob, aliceProject, bobSkill.id),
      await enableSkill(t, bob, MISSING, bobSkill.id),
      aliceProject,
      404,
      'project_not_found',
    );
    expect(await toolNames(t, alice, aliceProject)).not.toContain('bob_tool');
  });

  it("[sec-40] GET /v1/projects/:projectId/skills answers another tenant's project like a missing one", async () => {
    await expectSameAsMissing(
      await t.http.get(`/v1/projects/${aliceProject}/skills`).set(bob.auth),
      await t.http.get(`/v1/projects/${MISSING}/skills`).set(bob.auth),
      aliceProject,
      404,
      'project_not_found',
    );
    // Its owner still sees the list.
    const own = await t.http.get(`/v1/projects/${aliceProject}/skills`).set(alice.auth).expect(200);
    expect((own.body.items as Array<{ id: string }>).map((s) => s.id)).toEqual([aliceSkill.id]);
  });

  it("[sec-40] DELETE /v1/projects/:projectId/skills/:skillId answers another tenant's project or skill like a missing one", async () => {
    await expectSameAsMissing(
      await t.http.delete(`/v1/projects/${aliceProject}/skills/${aliceSkill.id}`).set(bob.auth),
      await t.http.delete(`/v1/projects/${MISSING}/skills/${aliceSkill.id}`).set(bob.auth),
      aliceProject,
      404,
      'project_not_found',
    );
    await expectSameAsMissing(
      await t.http.delete(`/v1/projects/${bobProject}/skills/${aliceSkill.id}`).set(bob.auth),
      await t.http.delete(`/v1/projects/${bobProject}/skills/${MISSING}`).set(bob.auth),
      aliceSkill.id,
      404,
      'skill_not_enabled',
    );
    await aliceSkillIsIntact();
    expect((await callTool(t, alice, aliceProject, 'alice_tool', { word: 'still here' }).expect(200)).body.result.stdout).toBe(
      'alice:still here',
    );
  });

  it("[sec-40] lists only the tenant's own skills, and lets two tenants use the same skill and tool names", async () => {
    expect((await listSkills(t, bob)).map((s) => s.id)).toEqual([bobSkill.id]);
    expect((await listSkills(t, alice)).map((s) => s.id)).toEqual([aliceSkill.id]);

    const sameName = skillOf([printTool('alice_tool', 'bob-copy')], { name: aliceSkill.name });
    const copy = await installSkill(t, bob, bobProject, sameName);
    expect((await callTool(t, bob, bobProject, 'alice_tool', { word: 'x' }).expect(200)).body.result.stdout).toBe('bob-copy:x');
    expect((await callTool(t, alice, aliceProject, 'alice_tool', { word: 'x' }).expect(200)).body.result.stdout).toBe('alice:x');
    await t.http.delete(`/v1/skills/${copy.id}`).set(bob.auth).expect(204);
    await aliceSkillIsIntact();
  });

  describe('[sec-36] schemas with the same $id in two tenants', () => {
    const SHARED_ID = 'https://schemas.toolgate.test/shared-input.json';
    const sharedSchema = (type: 'string' | 'integer') => ({
      $id: SHARED_ID,
      type: 'object',
      properties: { value: { type } },
      required: ['value'],
      additionalProperties: false,
    });
    const checkTool = (type: 'string' | 'integer') => commandTool('check_value', ['printf', `${type}:%s`, '{{value}}'], sharedSchema(type));
    let aliceCheckProject: string;
    let bobCheckProject: string;

    beforeAll(async () => {
      aliceCheckProject = (await t.createProject(alice, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
      bobCheckProject = (await t.createProject(bob, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
      await installSkill(t, alice, aliceCheckProject, skillOf([checkTool('string')]));
      await installSkill(t, bob, bobCheckProject, skillOf([checkTool('integer')]));
    });

    it('[sec-36] validates each tenant’s calls against its own schema', async () => {
      const aliceOk = await callTool(t, alice, aliceCheckProject, 'check_value', { value: 'text' }).expect(200);
      expect(aliceOk.body).toMatchObject({ status: 'ok', result: { stdout: 'string:text' } });
      const aliceBad = expectError(await callTool(t, alice, aliceCheckProject, 'check_value', { value: 7 }), 422, 'invalid_arguments');
      expect(aliceBad.message).toContain('Usage: check_value(value: string)');

      const bobOk = await callTool(t, bob, bobCheckProject, 'check_value', { value: 7 }).expect(200);
      expect(bobOk.body).toMatchObject({ status: 'ok', result: { stdout: 'integer:7' } });
      const bobBad = expectError(await callTool(t, bob, bobCheckProject, 'check_value', { value: 'text' }), 422, 'invalid_arguments');
      expect(bobBad.message).toContain('Usage: check_value(value: integer)');
    });

    it('[sec-36] refuses a $ref to that $id from another tool instead of resolving it to anyone’s schema; nothing stored', async () => {
      for (const ref of [SHARED_ID, `${SHARED_ID}#/properties/value`]) {
        const body = skillOf([
          commandTool('uses_shared', ['printf', '%s', '{{value}}'], { type: 'object', properties: { value: { $ref: ref } } }),
        ]);
        const error = expectError(await postSkill(t, bob, body), 422, 'schema_refused');
        expect(error.details).toEqual({
          tool: 'uses_shared',
          schema: 'inputSchema',
          location: '/properties/value/$ref',
          reason: expect.stringContaining(ref),
        });
        expect((await listSkills(t, bob)).map((s) => s.name)).not.toContain(body.name);
      }
    });

    it('[sec-36] lets the same tenant publish a new version under the same $id, and validation follows the new version', async () => {
      const third = await t.createTenant();
      const project = (await t.createProject(third, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
      const skill = await installSkill(t, third, project, skillOf([checkTool('string')]));
      await t.http
        .put(`/v1/skills/${skill.id}`)
        .set(third.auth)
        .send({ ...skillOf([checkTool('integer')]), version: '2.0.0' })
        .expect(200);
      expect((await callTool(t, third, project, 'check_value', { value: 3 }).expect(200)).body.result.stdout).toBe('integer:3');
      expectError(await callTool(t, third, project, 'check_value', { value: 'text' }), 422, 'invalid_arguments');
      // The other tenants are untouched.
      expectError(await callTool(t, bob, bobCheckProject, 'check_value', { value: 'text' }), 422, 'invalid_arguments');
      expect((await callTool(t, alice, aliceCheckProject, 'check_value', { value: 'text' }).expect(200)).body.result.stdout).toBe(
        'string:text',
      );
    });
  });
});
