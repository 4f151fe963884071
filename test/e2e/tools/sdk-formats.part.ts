import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tool as agentsTool } from '@openai/agents-core';
import ts from 'typescript';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { callTool, SHELL_PROJECT } from './tool-test-kit.js';

interface OpenAiTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown>; strict: boolean };
}

const CLOSED = {
  type: 'object',
  properties: { city: { type: 'string', description: 'The city' } },
  required: ['city'],
  additionalProperties: false,
};
const ONE_OF = {
  type: 'object',
  properties: { unit: { oneOf: [{ const: 'c' }, { const: 'f' }] } },
  required: ['unit'],
  additionalProperties: false,
};

// The listing's shapes as the official SDKs take them: the live answers compiled against the `openai` and
// `@anthropic-ai/sdk` types (and through the OpenAPI document's own types, as a typed client reads them), and
// the OpenAI Agents SDK's strict converter run on what Toolgate calls strict, and on what it does not.
describe('tool formats real SDKs accept', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;

  const listing = async (format: string) =>
    (await t.http.get(`/v1/projects/${projectId}/tools?format=${format}`).set(tenant.auth).expect(200)).body as {
      format: string;
      tools: unknown[];
    };

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    const executor = { type: 'http', url: 'https://api.example.com/weather' };
    const skill = await t.http
      .post('/v1/skills')
      .set(tenant.auth)
      .send({
        name: 'weather',
        version: '1.0.0',
        description: 'Weather',
        tools: [
          { name: 'forecast', description: 'The forecast for a city', inputSchema: CLOSED, executor },
          { name: 'convert', description: 'Converts a temperature', inputSchema: ONE_OF, executor },
        ],
      })
      .expect(201);
    await t.http.post(`/v1/projects/${projectId}/skills`).set(tenant.auth).send({ skillId: skill.body.id }).expect(201);
  });
  afterAll(() => t.close());

  it('compiles the live openai, openai-responses and anthropic answers against the official SDK types and the OpenAPI types', async () => {
    const [chat, responses, anthropic] = await Promise.all([listing('openai'), listing('openai-responses'), listing('anthropic')]);
    expect([chat.format, responses.format, anthropic.format]).toEqual(['openai', 'openai-responses', 'anthropic']);
    expect(responses.tools[0]).toEqual({
      type: 'function',
      name: 'read_file',
      description: expect.any(String),
      parameters: expect.any(Object),
      strict: false,
    });
    const schemaTypes = path.resolve('console/src/api/schema.js');
    const source = `
      import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
      import type { FunctionTool } from 'openai/resources/responses/responses';
      import type { Tool } from '@anthropic-ai/sdk/resources/messages';
      import type { paths } from ${JSON.stringify(schemaTypes)};
      export const chat: ChatCompletionFunctionTool[] = ${JSON.stringify(chat.tools)};
      export const responses: FunctionTool[] = ${JSON.stringify(responses.tools)};
      export const anthropic: Tool[] = ${JSON.stringify(anthropic.tools)};
      // A typed client narrows the listing by its format and hands the tools straight to the SDKs.
      type Listing = paths['/v1/projects/{projectId}/tools']['get']['responses'][200]['content']['application/json'];
      export function toSdk(listing: Listing): ChatCompletionFunctionTool[] | FunctionTool[] | Tool[] {
        switch (listing.format) {
          case 'openai': return listing.tools satisfies ChatCompletionFunctionTool[];
          case 'openai-responses': return listing.tools satisfies FunctionTool[];
          case 'anthropic': return listing.tools satisfies Tool[];
          default: return [];
        }
      }
    `;
    // Inside the repository, so the packages resolve from its node_modules.
    const dir = await mkdtemp(path.resolve('node_modules/.sdk-formats-'));
    try {
      const file = path.join(dir, 'answers.ts');
      await writeFile(file, source);
      const program = ts.createProgram([file], {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        types: [],
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n').slice(0, 400));
      expect(problems).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("says strict only where the Agents SDK's strict converter keeps the schema as it is, and never for a schema it refuses", async () => {
    const tools = (await listing('openai')).tools as OpenAiTool[];
    const byName = new Map(tools.map((t) => [t.function.name, t.function]));
    expect(byName.get('forecast')?.strict).toBe(true);
    expect(byName.get('convert')?.strict).toBe(false);
    for (const fn of tools.map((t) => t.function)) {
      const convert = () =>
        agentsTool({ name: fn.name, description: fn.description, parameters: fn.parameters as never, strict: true, execute: () => '' });
      if (fn.strict) {
        const converted = convert() as { parameters: unknown; strict: boolean };
        expect({ tool: fn.name, parameters: converted.parameters }).toEqual({ tool: fn.name, parameters: fn.parameters });
      }
    }
    // oneOf is outside OpenAI's strict subset: the converter refuses it, and Toolgate never claimed it.
    expect(() => agentsTool({ name: 'convert', description: 'x', parameters: ONE_OF as never, strict: true, execute: () => '' })).toThrow(
      /oneOf/,
    );
  });

  it('lists every tool strict with ?strict=true, in a form the Agents SDK takes unchanged, and runs a call made with it against the full schema', async () => {
    const strict = (await t.http.get(`/v1/projects/${projectId}/tools?format=openai&strict=true`).set(tenant.auth).expect(200)).body as {
      tools: OpenAiTool[];
    };
    expect(strict.tools.filter((tool) => !tool.function.strict).map((tool) => tool.function.name)).toEqual([]);
    for (const fn of strict.tools.map((tool) => tool.function)) {
      const converted = agentsTool({
        name: fn.name,
        description: fn.description,
        parameters: fn.parameters as never,
        strict: true,
        execute: () => '',
      }) as { parameters: unknown };
      expect({ tool: fn.name, parameters: converted.parameters }).toEqual({ tool: fn.name, parameters: fn.parameters });
    }
    const shell = strict.tools.find((tool) => tool.function.name === 'shell_exec')!.function;
    expect(shell.parameters).toMatchObject({
      properties: { env: { type: ['array', 'null'], items: { properties: { name: { type: 'string' } } } } },
    });
    // As a strict model calls it: every parameter present, nulls for those it leaves out, the map as pairs.
    const shellProject = (await t.createProject(tenant, SHELL_PROJECT)).id;
    const args = {
      argv: ['sh', '-c', 'printf %s "$GREETING"'],
      cwd: null,
      timeoutMs: null,
      env: [{ name: 'GREETING', value: 'hello-strict' }],
      stdin: null,
    };
    const ran = await callTool(t, tenant, shellProject, 'shell_exec', args).expect(200);
    expect(ran.body).toMatchObject({ status: 'ok', result: { stdout: 'hello-strict' } });
    const row = (
      await t.http
        .get(`/v1/projects/${shellProject}/invocations/${ran.body.invocationId as string}`)
        .set(tenant.auth)
        .expect(200)
    ).body as { arguments: unknown };
    expect(JSON.stringify(row.arguments)).not.toContain('hello-strict');
    // What the strict definition only describes is still checked: an environment variable's name.
    const refused = await callTool(t, tenant, shellProject, 'shell_exec', {
      ...args,
      env: [{ name: 'NOT A NAME', value: 'hello-strict' }],
    });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).not.toContain('hello-strict');
  });

  it("accepts the nulls a strict converter's schema makes a model send for optional parameters, as absent", async () => {
    const readFile = ((await listing('openai')).tools as OpenAiTool[]).find((t) => t.function.name === 'read_file')!.function;
    const converted = agentsTool({
      name: readFile.name,
      description: readFile.description,
      parameters: readFile.parameters as never,
      strict: true,
      execute: () => '',
    }) as unknown as {
      parameters: { required: string[]; properties: Record<string, { type?: unknown; anyOf?: unknown[] }> };
    };
    // The converter made every parameter required, the optional ones nullable.
    expect(converted.parameters.required.sort()).toEqual(Object.keys(readFile.parameters.properties as object).sort());
    expect(JSON.stringify(converted.parameters.properties.offset)).toContain('null');
    await callTool(t, tenant, projectId, 'write_file', { path: 'notes.txt', content: 'one\ntwo\n' }).expect(200);
    const read = await callTool(t, tenant, projectId, 'read_file', { path: 'notes.txt', offset: null, limit: null, encoding: null }).expect(
      200,
    );
    expect(read.body).toMatchObject({ status: 'ok', result: { content: 'one\ntwo\n' } });
    // A required parameter's null is still refused.
    const refused = await callTool(t, tenant, projectId, 'read_file', { path: null });
    expect(refused.status).toBe(422);
  });
});
