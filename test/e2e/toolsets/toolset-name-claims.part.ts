import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { UpstreamMcpServer } from '../mcp/upstream-mcp-server.js';
import {
  commandTool,
  enableSkill,
  expectError,
  postSkill,
  registerSkill,
  skillOf,
  STRING_ARG,
  toolNames,
  uniqueName,
} from '../skills/skill-test-kit.js';

const upstreamTool = (name: string): Tool => ({
  name,
  description: `The upstream's ${name}`,
  inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false },
});

const lookupTool = (tag: string) => commandTool('lookup', ['printf', `${tag}:%s`, '{{word}}'], STRING_ARG('word'));

// A toolset that shows read_file as `lookup` holds that name in its project: the model calls read_file by it.
// A skill's tool named `lookup` joining the project (enabled, a new version, an accepted change of an MCP
// source) would make one name mean two tools, and is refused as a rename onto a skill's tool is.
describe('toolsets: names given by renaming are held against skills', () => {
  let t: TestApp;
  let tenant: TestTenant;
  const upstream = new UpstreamMcpServer([upstreamTool('search')]);

  beforeAll(async () => {
    await upstream.start();
    // The source is read on demand only (POST …/refresh), never by the schedule during the suite.
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}`, MCP_SOURCE_REFRESH_S: '3600' } });
    tenant = await t.createTenant();
  });
  afterAll(async () => {
    await t.close();
    await upstream.stop();
  });

  const newProject = async () => (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
  const createToolset = (projectId: string, slug: string, tools: unknown[]) =>
    t.http.post(`/v1/projects/${projectId}/toolsets`).set(tenant.auth).send({ slug, name: slug, mode: 'direct', tools });
  const renamingReadFile = (projectId: string, slug = 'docs') =>
    createToolset(projectId, slug, [{ select: 'read_file', name: 'lookup' }]).expect(201);
  const heldBy = (slug: string) => ({ collisions: [{ tool: 'lookup', conflictsWith: `toolset:${slug}`, renamed: 'read_file' }] });

  it('refuses to enable a skill whose tool takes a name a toolset gives, naming the toolset; the name is free once the toolset lets go', async () => {
    const projectId = await newProject();
    await renamingReadFile(projectId);
    const skill = await registerSkill(t, tenant, skillOf([lookupTool('skill')]));
    const error = expectError(await enableSkill(t, tenant, projectId, skill.id), 409, 'tool_name_collision');
    expect(error.message).toBe("Tool names must be unique in a project: 'lookup' is already the name toolset 'docs' shows read_file under");
    expect(error.details).toEqual(heldBy('docs'));
    expect(await toolNames(t, tenant, projectId)).not.toContain('lookup');

    // The toolset renames read_file otherwise: the name is free, and the skill's tool takes it.
    await t.http
      .put(`/v1/projects/${projectId}/toolsets/docs`)
      .set(tenant.auth)
      .send({ slug: 'docs', name: 'docs', mode: 'direct', tools: [{ select: 'read_file', name: 'read_doc' }] })
      .expect(200);
    await enableSkill(t, tenant, projectId, skill.id).expect(201);
    const call = await t.http
      .post(`/v1/projects/${projectId}/tools/lookup/invoke`)
      .set(tenant.auth)
      .send({ arguments: { word: 'x' } })
      .expect(200);
    expect(call.body.result.stdout).toBe('skill:x');
  });

  it('holds the name for a toolset whose renamed tool is not served now, and frees it when the toolset is deleted', async () => {
    const projectId = await newProject();
    const mine = await registerSkill(t, tenant, skillOf([commandTool('find', ['printf', '%s', '{{word}}'], STRING_ARG('word'))]));
    await enableSkill(t, tenant, projectId, mine.id).expect(201);
    await createToolset(projectId, 'finder', [{ select: 'find', name: 'lookup' }]).expect(201);
    // The skill leaves the project; its toolset entry, and the name it gives, stay.
    await t.http.delete(`/v1/projects/${projectId}/skills/${mine.id}`).set(tenant.auth).expect(204);
    const other = await registerSkill(t, tenant, skillOf([lookupTool('other')]));
    expect(expectError(await enableSkill(t, tenant, projectId, other.id), 409, 'tool_name_collision').details).toEqual({
      collisions: [{ tool: 'lookup', conflictsWith: 'toolset:finder', renamed: 'find' }],
    });
    await t.http.delete(`/v1/projects/${projectId}/toolsets/finder`).set(tenant.auth).expect(204);
    await enableSkill(t, tenant, projectId, other.id).expect(201);
  });

  it('refuses a new version that brings the name on a project where the skill is enabled, and keeps the old version', async () => {
    const projectId = await newProject();
    const skill = await registerSkill(t, tenant, skillOf([commandTool('shout', ['printf', '%s', '{{word}}'], STRING_ARG('word'))]));
    await enableSkill(t, tenant, projectId, skill.id).expect(201);
    await renamingReadFile(projectId, 'reader');
    const clash = skillOf([commandTool('shout', ['printf', '%s', '{{word}}'], STRING_ARG('word')), lookupTool('v2')], {
      name: skill.name,
      version: '2.0.0',
    });
    const error = expectError(await t.http.put(`/v1/skills/${skill.id}`).set(tenant.auth).send(clash), 409, 'tool_name_collision');
    expect(error.details).toEqual(heldBy('reader'));
    expect((await t.http.get(`/v1/skills/${skill.id}`).set(tenant.auth).expect(200)).body.version).toBe('1.0.0');
  });

  it("refuses to accept an MCP source's new tool that takes the name, and leaves the change pending", async () => {
    const projectId = await newProject();
    const imported = await postSkill(t, tenant, {
      name: uniqueName('upstream'),
      version: '1.0.0',
      description: 'An upstream',
      source: { type: 'mcp', url: upstream.url },
    });
    expect(imported.status).toBe(201);
    const skillId = imported.body.id as string;
    await enableSkill(t, tenant, projectId, skillId).expect(201);
    await renamingReadFile(projectId, 'librarian');

    upstream.tools = [upstreamTool('search'), upstreamTool('lookup')];
    const refreshed = await t.http.post(`/v1/skills/${skillId}/refresh`).set(tenant.auth).expect(200);
    const added = (refreshed.body.pending as Array<{ id: string; tool: string; kind: string }>).find((change) => change.tool === 'lookup');
    expect(added).toMatchObject({ kind: 'added' });
    const error = expectError(
      await t.http.post(`/v1/skills/${skillId}/changes/${added!.id}/accept`).set(tenant.auth),
      409,
      'tool_name_collision',
    );
    expect(error.details).toEqual(heldBy('librarian'));
    const pending = (await t.http.get(`/v1/skills/${skillId}/changes`).set(tenant.auth).expect(200)).body.items as Array<{
      id: string;
      status: string;
    }>;
    expect(pending.find((change) => change.id === added!.id)).toMatchObject({ status: 'pending' });
    expect(await toolNames(t, tenant, projectId)).not.toContain('lookup');
  });

  it('lets one of a rename and a skill enabled at the same moment take the name, never both', async () => {
    // Several projects at once, so that some enable and some toolset write meet inside each other's check.
    const races = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const projectId = await newProject();
        const skill = await registerSkill(t, tenant, skillOf([lookupTool('race')]));
        const [enabled, created] = await Promise.all([
          enableSkill(t, tenant, projectId, skill.id),
          createToolset(projectId, 'racer', [{ select: 'read_file', name: 'lookup' }]),
        ]);
        return {
          enabled: enabled.status,
          created: created.status,
          loser: (enabled.status === 409 ? enabled : created).body?.error?.code as unknown,
        };
      }),
    );
    for (const race of races) expect(race).toEqual({ enabled: race.enabled, created: race.created, loser: 'tool_name_collision' });
    for (const race of races) expect([race.enabled, race.created].sort()).toEqual([201, 409]);
  });
});
