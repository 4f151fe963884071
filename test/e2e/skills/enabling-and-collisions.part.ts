import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import {
  callTool,
  commandTool,
  enableSkill,
  expectError,
  installSkill,
  registerSkill,
  skillOf,
  STRING_ARG,
  toolNames,
} from './skill-test-kit.js';

const BUILTINS = [
  'read_file',
  'write_file',
  'list_files',
  'delete_file',
  'shell_exec',
  'fetch_url',
  'edit_file',
  'search_files',
  'move_file',
  'read_multiple_files',
];

// A tool that prints its name and its argument, so a call shows which skill's tool answered.
const echoTool = (name: string, tag = name) => commandTool(name, ['printf', `${tag}:%s`, '{{word}}'], STRING_ARG('word'));

describe('enabling skills on projects, and tool name collisions', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  const newProject = async () => (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
  const enabledSkills = async (projectId: string) =>
    (
      (await t.http.get(`/v1/projects/${projectId}/skills`).set(tenant.auth).expect(200)).body.items as Array<{
        id: string;
        version: string;
      }>
    ).map((s) => `${s.id}@${s.version}`);

  it('enables a skill: its tools join the built-ins, can be called, and the project lists the skill', async () => {
    const projectId = await newProject();
    const skill = await registerSkill(t, tenant, skillOf([echoTool('shout')]));
    const res = await enableSkill(t, tenant, projectId, skill.id).expect(201);
    expect(res.body).toEqual({
      projectId,
      skill: {
        id: skill.id,
        name: skill.name,
        version: '1.0.0',
        description: expect.any(String),
        source: null,
        tools: skill.tools,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
      enabledAt: expect.any(String),
    });
    expect(res.text).not.toContain(skill.signingSecret);
    expect(await toolNames(t, tenant, projectId)).toEqual([...BUILTINS, 'shout']);
    expect(await enabledSkills(projectId)).toEqual([`${skill.id}@1.0.0`]);
    const call = await callTool(t, tenant, projectId, 'shout', { word: 'hi' }).expect(200);
    expect(call.body).toMatchObject({ status: 'ok', result: { stdout: 'shout:hi' } });

    // Another project of the same tenant does not get the tools until it enables the skill.
    const other = await newProject();
    expect(await toolNames(t, tenant, other)).toEqual(BUILTINS);
    expectError(await callTool(t, tenant, other, 'shout', { word: 'hi' }), 404, 'tool_not_found');
  });

  it('refuses to enable the same skill twice with 409 skill_already_enabled', async () => {
    const projectId = await newProject();
    const skill = await installSkill(t, tenant, projectId, skillOf([echoTool('twice')]));
    const error = expectError(await enableSkill(t, tenant, projectId, skill.id), 409, 'skill_already_enabled');
    expect(error.message).toContain(skill.id);
    expect(await toolNames(t, tenant, projectId)).toEqual([...BUILTINS, 'twice']);
  });

  it('refuses a skill tool named like a built-in with 409 tool_name_collision naming the tool and the built-ins', async () => {
    const projectId = await newProject();
    const skill = await registerSkill(t, tenant, skillOf([echoTool('fine_name'), echoTool('read_file')]));
    const error = expectError(await enableSkill(t, tenant, projectId, skill.id), 409, 'tool_name_collision');
    expect(error.message).toContain("'read_file'");
    expect(error.message).toContain('built-in');
    expect(error.details).toEqual({ collisions: [{ tool: 'read_file', conflictsWith: 'builtin' }] });
    expect(await toolNames(t, tenant, projectId)).toEqual(BUILTINS);
    expect(await enabledSkills(projectId)).toEqual([]);
    // read_file is still the built-in one.
    const readFile = await t.http.get(`/v1/projects/${projectId}/tools/read_file`).set(tenant.auth).expect(200);
    expect(readFile.body.source).toBe('builtin');
  });

  it("refuses a second enabled skill with the same tool name with 409 naming the tool and 'skill:<name>@<version>'", async () => {
    const projectId = await newProject();
    const first = await installSkill(t, tenant, projectId, skillOf([echoTool('lookup', 'first')]));
    const second = await registerSkill(t, tenant, skillOf([echoTool('unique_tool'), echoTool('lookup', 'second')]));
    const error = expectError(await enableSkill(t, tenant, projectId, second.id), 409, 'tool_name_collision');
    expect(error.message).toContain("'lookup'");
    expect(error.message).toContain(`skill:${first.name}@1.0.0`);
    expect(error.details).toEqual({ collisions: [{ tool: 'lookup', conflictsWith: `skill:${first.name}@1.0.0` }] });
    expect(await toolNames(t, tenant, projectId)).toEqual([...BUILTINS, 'lookup']);
    const call = await callTool(t, tenant, projectId, 'lookup', { word: 'x' }).expect(200);
    expect(call.body.result.stdout).toBe('first:x');

    // The same names are fine on a project where the first skill is not enabled.
    const elsewhere = await newProject();
    await enableSkill(t, tenant, elsewhere, second.id).expect(201);
    expect((await callTool(t, tenant, elsewhere, 'lookup', { word: 'x' }).expect(200)).body.result.stdout).toBe('second:x');
  });

  it('refuses a PUT that brings a colliding tool name on a project where the skill is enabled, and keeps the old version', async () => {
    const projectId = await newProject();
    const first = await installSkill(t, tenant, projectId, skillOf([echoTool('alpha')]));
    const second = await installSkill(t, tenant, projectId, skillOf([echoTool('beta')]));

    const clash = skillOf([echoTool('beta'), echoTool('alpha', 'stolen')], { name: second.name, version: '2.0.0' });
    const error = expectError(await t.http.put(`/v1/skills/${second.id}`).set(tenant.auth).send(clash), 409, 'tool_name_collision');
    expect(error.details).toEqual({ collisions: [{ tool: 'alpha', conflictsWith: `skill:${first.name}@1.0.0` }] });

    const builtin = skillOf([echoTool('write_file')], { name: second.name, version: '2.0.1' });
    const builtinError = expectError(
      await t.http.put(`/v1/skills/${second.id}`).set(tenant.auth).send(builtin),
      409,
      'tool_name_collision',
    );
    expect(builtinError.message).toContain("'write_file'");
    expect(builtinError.message).toContain('built-in');

    expect((await t.http.get(`/v1/skills/${second.id}`).set(tenant.auth).expect(200)).body.version).toBe('1.0.0');
    expect(await toolNames(t, tenant, projectId)).toEqual([...BUILTINS, 'alpha', 'beta']);
    expect((await callTool(t, tenant, projectId, 'alpha', { word: 'x' }).expect(200)).body.result.stdout).toBe('alpha:x');

    // A version whose names stay unique is published, and the project sees it at once.
    const fine = skillOf([echoTool('beta', 'beta2'), echoTool('gamma')], { name: second.name, version: '2.0.0' });
    await t.http.put(`/v1/skills/${second.id}`).set(tenant.auth).send(fine).expect(200);
    expect(await toolNames(t, tenant, projectId)).toEqual([...BUILTINS, 'alpha', 'beta', 'gamma']);
    expect((await callTool(t, tenant, projectId, 'beta', { word: 'x' }).expect(200)).body.result.stdout).toBe('beta2:x');
  });

  it('disables a skill on one project: its tools are gone there, and a second DELETE answers 404 skill_not_enabled', async () => {
    const projectId = await newProject();
    const other = await newProject();
    const skill = await installSkill(t, tenant, projectId, skillOf([echoTool('temporary')]));
    await enableSkill(t, tenant, other, skill.id).expect(201);

    await t.http.delete(`/v1/projects/${projectId}/skills/${skill.id}`).set(tenant.auth).expect(204);
    expect(await toolNames(t, tenant, projectId)).toEqual(BUILTINS);
    expect(await enabledSkills(projectId)).toEqual([]);
    expectError(await callTool(t, tenant, projectId, 'temporary', { word: 'x' }), 404, 'tool_not_found');
    const again = expectError(
      await t.http.delete(`/v1/projects/${projectId}/skills/${skill.id}`).set(tenant.auth),
      404,
      'skill_not_enabled',
    );
    expect(again.message).toContain(skill.id);

    // Still enabled, and callable, on the other project; enabling it again on the first works.
    expect(await toolNames(t, tenant, other)).toEqual([...BUILTINS, 'temporary']);
    await enableSkill(t, tenant, projectId, skill.id).expect(201);
    expect(await toolNames(t, tenant, projectId)).toEqual([...BUILTINS, 'temporary']);
  });

  it('deletes a skill: its tools disappear from every project it was enabled on', async () => {
    const projects = [await newProject(), await newProject(), await newProject()];
    const skill = await registerSkill(t, tenant, skillOf([echoTool('doomed'), echoTool('doomed_too')]));
    for (const projectId of projects) await enableSkill(t, tenant, projectId, skill.id).expect(201);
    // Listed once everywhere, so any cache holds the tools before the delete.
    for (const projectId of projects) expect(await toolNames(t, tenant, projectId)).toEqual([...BUILTINS, 'doomed', 'doomed_too']);

    await t.http.delete(`/v1/skills/${skill.id}`).set(tenant.auth).expect(204);
    for (const projectId of projects) {
      expect(await toolNames(t, tenant, projectId)).toEqual(BUILTINS);
      expect(await enabledSkills(projectId)).toEqual([]);
      expectError(await callTool(t, tenant, projectId, 'doomed', { word: 'x' }), 404, 'tool_not_found');
    }
    // The names are free again.
    await installSkill(t, tenant, projects[0], skillOf([echoTool('doomed', 'reborn')]));
    expect((await callTool(t, tenant, projects[0], 'doomed', { word: 'x' }).expect(200)).body.result.stdout).toBe('reborn:x');
  });

  it('answers 404 for a skill or a project that does not exist, and 400 for a body without a skill id', async () => {
    const projectId = await newProject();
    const missing = '00000000-0000-4000-8000-000000000000';
    const skillError = expectError(await enableSkill(t, tenant, projectId, missing), 404, 'skill_not_found');
    expect(skillError.message).toContain(missing);
    const skill = await registerSkill(t, tenant, skillOf([echoTool('orphan')]));
    const projectError = expectError(await enableSkill(t, tenant, missing, skill.id), 404, 'project_not_found');
    expect(projectError.message).toContain(missing);
    expectError(await t.http.get(`/v1/projects/${missing}/skills`).set(tenant.auth), 404, 'project_not_found');
    expectError(await t.http.delete(`/v1/projects/${missing}/skills/${skill.id}`).set(tenant.auth), 404, 'project_not_found');
    expectError(await t.http.post(`/v1/projects/${projectId}/skills`).set(tenant.auth).send({}), 400, 'validation_failed');
    expectError(
      await t.http.post(`/v1/projects/${projectId}/skills`).set(tenant.auth).send({ skillId: skill.id, extra: 1 }),
      400,
      'validation_failed',
    );
  });
});
