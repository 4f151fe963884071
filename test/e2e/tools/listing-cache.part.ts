import { BUILTIN_TOOL_NAMES } from '../../../src/execution/builtin-tool-names.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { commandTool, enableSkill, expectError, installSkill, registerSkill, skillOf, STRING_ARG } from '../skills/skill-test-kit.js';

const FORMATS = ['native', 'openai', 'anthropic', 'mcp'] as const;
const JSON_TYPE = 'application/json; charset=utf-8';
const BUILTINS = BUILTIN_TOOL_NAMES.length;

interface ListedTool {
  name?: string;
  description?: string;
  function?: { name: string; description: string };
}

const echoTool = (name: string, description = `Echoes a word (${name})`) =>
  commandTool(name, ['printf', `${name}:%s`, '{{word}}'], STRING_ARG('word'), { description });

// The listing is served from a cached, pre-serialised body; these check that what goes out is what the
// tools are now, for this project only.
describe('tool listing served from its cache', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  const newProject = async (who = tenant) => (await t.createProject(who, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
  const list = (projectId: string, format: string = 'native', who = tenant) =>
    t.http.get(`/v1/projects/${projectId}/tools`).query({ format }).set(who.auth);
  const listed = async (projectId: string, format: string = 'native', who = tenant) =>
    (await list(projectId, format, who).expect(200)).body.tools as ListedTool[];
  // Name and description whatever the format's shape.
  const summary = async (projectId: string, format: string = 'native', who = tenant) =>
    (await listed(projectId, format, who)).map((tool) => {
      const { name, description } = tool.function ?? tool;
      return `${name}: ${description}`;
    });
  const names = async (projectId: string, format: string = 'native', who = tenant) =>
    (await summary(projectId, format, who)).map((line) => line.slice(0, line.indexOf(':')));
  // The bytes the listing had before it was cached: each tool as the one-tool route (a plain returned
  // object, serialised by the adapter) answers it, in listing order, serialised the same way.
  const uncachedText = async (projectId: string, format: string, who = tenant) => {
    const tools: unknown[] = [];
    for (const name of await names(projectId, 'native', who)) {
      tools.push((await t.http.get(`/v1/projects/${projectId}/tools/${name}`).query({ format }).set(who.auth).expect(200)).body);
    }
    return JSON.stringify({ format, tools });
  };

  it('answers every format with the same JSON bytes as before, with a JSON content type and matching length', async () => {
    const withSkills = await newProject();
    await installSkill(t, tenant, withSkills, skillOf([echoTool('alpha'), echoTool('beta')]));
    // Multi-byte characters: the body is sent as pre-encoded bytes, so its length must count bytes.
    await installSkill(t, tenant, withSkills, skillOf([echoTool('gamma', 'Grüße ✓ 日本語 \u2028 "quoted" </script>')]));
    const builtinsOnly = await newProject();
    for (const projectId of [withSkills, builtinsOnly]) {
      for (const format of FORMATS) {
        const first = await list(projectId, format).expect(200);
        const again = await list(projectId, format).expect(200);
        expect({ projectId, format, text: first.text }).toEqual({ projectId, format, text: await uncachedText(projectId, format) });
        expect(again.text).toBe(first.text);
        for (const res of [first, again]) {
          expect(res.headers['content-type']).toBe(JSON_TYPE);
          expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
        }
      }
    }
    expect(await names(withSkills)).toEqual(expect.arrayContaining(['alpha', 'beta', 'gamma']));
    expect(await names(builtinsOnly)).toHaveLength(BUILTINS);
  });

  it('shows a skill enabled, updated, disabled or deleted on the very next listing, in every format', async () => {
    const projectId = await newProject();
    const builtins = await summary(projectId);
    const everyFormat = async () => Promise.all(FORMATS.map(async (format) => ({ format, tools: await summary(projectId, format) })));
    const inEveryFormat = (tools: string[]) => FORMATS.map((format) => ({ format, tools }));
    // Every format is cached before each change.
    expect(await everyFormat()).toEqual(inEveryFormat(builtins));

    const skill = await registerSkill(t, tenant, skillOf([echoTool('poll_me', 'First version')]));
    await enableSkill(t, tenant, projectId, skill.id).expect(201);
    expect(await everyFormat()).toEqual(inEveryFormat([...builtins, 'poll_me: First version']));

    const next = skillOf([echoTool('poll_me', 'Second version'), echoTool('poll_too')], { name: skill.name, version: '2.0.0' });
    await t.http.put(`/v1/skills/${skill.id}`).set(tenant.auth).send(next).expect(200);
    expect(await everyFormat()).toEqual(inEveryFormat([...builtins, 'poll_me: Second version', 'poll_too: Echoes a word (poll_too)']));

    await t.http.delete(`/v1/projects/${projectId}/skills/${skill.id}`).set(tenant.auth).expect(204);
    expect(await everyFormat()).toEqual(inEveryFormat(builtins));

    await enableSkill(t, tenant, projectId, skill.id).expect(201);
    expect(await names(projectId)).toContain('poll_too');
    await t.http.delete(`/v1/skills/${skill.id}`).set(tenant.auth).expect(204);
    expect(await everyFormat()).toEqual(inEveryFormat(builtins));
  });

  it('keeps each listing to its own project and tenant', async () => {
    const other = await t.createTenant();
    const mine = await newProject();
    const mineBare = await newProject();
    const theirs = await newProject(other);
    await installSkill(t, tenant, mine, skillOf([echoTool('mine_only'), echoTool('same_name', 'Mine')]));
    await installSkill(t, other, theirs, skillOf([echoTool('same_name', 'Theirs')]));

    for (const format of FORMATS) {
      const mineTools = await summary(mine, format);
      const theirTools = await summary(theirs, format, other);
      expect({
        format,
        mine: mineTools.slice(BUILTINS),
        theirs: theirTools.slice(BUILTINS),
        bare: (await summary(mineBare, format)).length,
      }).toEqual({
        format,
        mine: ['mine_only: Echoes a word (mine_only)', 'same_name: Mine'],
        theirs: ['same_name: Theirs'],
        bare: BUILTINS,
      });
    }

    // With both listings cached, the other tenant still cannot read this project's: 404 like a missing one.
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const [projectId, who] of [
      [mine, other],
      [theirs, tenant],
    ] as const) {
      const refused = expectError(await list(projectId, 'native', who), 404, 'project_not_found');
      const absent = expectError(await list(missing, 'native', who), 404, 'project_not_found');
      expect(refused.message.replace(projectId, '<id>')).toBe(absent.message.replace(missing, '<id>'));
    }

    // A change to one project leaves the others' listings as they were.
    await installSkill(t, tenant, mineBare, skillOf([echoTool('bare_no_more')]));
    expect((await names(mineBare)).slice(BUILTINS)).toEqual(['bare_no_more']);
    expect((await summary(mine)).slice(BUILTINS)).toEqual(['mine_only: Echoes a word (mine_only)', 'same_name: Mine']);
    expect((await summary(theirs, 'native', other)).slice(BUILTINS)).toEqual(['same_name: Theirs']);
  });

  it('answers a project deleted after its listing was cached with 404', async () => {
    const projectId = await newProject();
    await installSkill(t, tenant, projectId, skillOf([echoTool('doomed')]));
    expect(await names(projectId)).toContain('doomed');
    await t.http.delete(`/v1/projects/${projectId}`).set(tenant.auth).expect(204);
    expectError(await list(projectId), 404, 'project_not_found');
  });

  describe('ETag', () => {
    const etagOf = async (projectId: string, format: string = 'native') => {
      const etag = (await list(projectId, format).expect(200)).headers.etag as string | undefined;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      return etag!;
    };

    it('answers 304 with no body to an If-None-Match naming the current ETag', async () => {
      const projectId = await newProject();
      await installSkill(t, tenant, projectId, skillOf([echoTool('cached_one')]));
      const etag = await etagOf(projectId);
      for (const ifNoneMatch of [etag, `W/${etag}`, `"something-else", ${etag}`, '*']) {
        const res = await list(projectId).set('If-None-Match', ifNoneMatch).expect(304);
        expect({ ifNoneMatch, text: res.text, contentType: res.headers['content-type'], etag: res.headers.etag }).toEqual({
          ifNoneMatch,
          text: '',
          contentType: undefined,
          etag,
        });
      }
      const stale = await list(projectId).set('If-None-Match', '"something-else"').expect(200);
      expect(stale.body.tools).toHaveLength(BUILTINS + 1);
      // A client that asks not to be served from a cache gets the body.
      const noCache = await list(projectId).set('If-None-Match', etag).set('Cache-Control', 'no-cache').expect(200);
      expect(noCache.text).toBe(stale.text);
    });

    it('is the only answer with an ETag, on either adapter: other bodies are not hashed', async () => {
      const projectId = await newProject();
      const oneTool = await t.http.get(`/v1/projects/${projectId}/tools/read_file`).set(tenant.auth).expect(200);
      const project = await t.http.get(`/v1/projects/${projectId}`).set(tenant.auth).expect(200);
      const refused = await t.http
        .post(`/v1/projects/${projectId}/tools/read_file/invoke`)
        .set(tenant.auth)
        .send({ arguments: { path: 5 } })
        .expect(422);
      expect([oneTool, project, refused].map((res) => res.headers.etag)).toEqual([undefined, undefined, undefined]);
    });

    it('gives each format its own ETag', async () => {
      const projectId = await newProject();
      const etags = await Promise.all(FORMATS.map((format) => etagOf(projectId, format)));
      expect(new Set(etags).size).toBe(FORMATS.length);
      const openai = await list(projectId, 'openai').set('If-None-Match', etags[0]).expect(200);
      expect(openai.headers.etag).toBe(etags[1]);
    });

    it('changes the ETag when the project’s skills change, so a client polling with If-None-Match sees it', async () => {
      const projectId = await newProject();
      const builtinsOnly = await etagOf(projectId);
      const skill = await installSkill(t, tenant, projectId, skillOf([echoTool('watched', 'First')]));

      const enabled = await list(projectId).set('If-None-Match', builtinsOnly).expect(200);
      expect(enabled.headers.etag).not.toBe(builtinsOnly);
      expect(await names(projectId)).toContain('watched');
      await list(projectId).set('If-None-Match', enabled.headers.etag).expect(304);

      const next = skillOf([echoTool('watched', 'Second')], { name: skill.name, version: '1.1.0' });
      await t.http.put(`/v1/skills/${skill.id}`).set(tenant.auth).send(next).expect(200);
      const updated = await list(projectId).set('If-None-Match', enabled.headers.etag).expect(200);
      expect(updated.headers.etag).not.toBe(enabled.headers.etag);
      expect((await summary(projectId)).slice(BUILTINS)).toEqual(['watched: Second']);

      // The ETag names the content: back to the built-ins, back to their ETag.
      await t.http.delete(`/v1/projects/${projectId}/skills/${skill.id}`).set(tenant.auth).expect(204);
      const disabled = await list(projectId).set('If-None-Match', updated.headers.etag).expect(200);
      expect(disabled.headers.etag).toBe(builtinsOnly);
    });
  });
});
