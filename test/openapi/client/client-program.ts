// A small program a dashboard or an agent backend would write against Toolgate, typed only by what the
// OpenAPI document says: the types come from `openapi-typescript` run on /openapi.json, the calls from
// `openapi-fetch`. test/openapi/document.e2e-spec.ts generates the types, compiles this file with tsc
// (a document that lost a path parameter or required a field the service does not would break it) and
// runs it against a real instance. Usage: TOOLGATE_URL=http://… TOOLGATE_KEY=tg_… node client-program.js
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/toolgate-api.js';

type Project = components['schemas']['ProjectResponseDto'];
type Invocation = components['schemas']['InvocationResponseDto'];

const baseUrl = process.env.TOOLGATE_URL ?? 'http://localhost:3000';
const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${process.env.TOOLGATE_KEY ?? ''}` } });

// Every call answers { data } or { error } typed from the document; an error is the one error shape.
function expectData<T>(operation: string, answer: { data?: T; error?: unknown }): T {
  if (answer.data === undefined) throw new Error(`${operation} failed: ${JSON.stringify(answer.error)}`);
  return answer.data;
}

// A project, as the README creates one: a name and a slug, nothing else.
const project: Project = expectData(
  'createProject',
  await client.POST('/v1/projects', { body: { name: 'Typed client', slug: `typed-client-${Date.now()}` } }),
);

// Its tools, in each format the listing speaks.
const toolCounts: Record<string, number> = {};
for (const format of ['native', 'openai', 'openai-responses', 'anthropic', 'mcp'] as const) {
  const listing = expectData(
    'listTools',
    await client.GET('/v1/projects/{projectId}/tools', { params: { path: { projectId: project.id }, query: { format } } }),
  );
  toolCounts[format] = listing.tools.length;
}

// One call, with the arguments a model wrote; then one the tool's schema refuses.
const invoked = expectData(
  'invokeTool',
  await client.POST('/v1/projects/{projectId}/tools/{toolName}/invoke', {
    params: { path: { projectId: project.id, toolName: 'list_files' } },
    body: { arguments: { path: '.' } },
  }),
);
const refused = await client.POST('/v1/projects/{projectId}/tools/{toolName}/invoke', {
  params: { path: { projectId: project.id, toolName: 'read_file' } },
  body: { arguments: { path: 5 } },
});
const refusal = refused.error?.error;

// The audit log, a page of one at a time, then one invocation read back.
const logged: Invocation[] = [];
let cursor: string | undefined;
do {
  const page = expectData(
    'listInvocations',
    await client.GET('/v1/projects/{projectId}/invocations', { params: { path: { projectId: project.id }, query: { limit: 1, cursor } } }),
  );
  logged.push(...page.items);
  cursor = page.nextCursor ?? undefined;
} while (cursor);
const invocation = expectData(
  'getInvocation',
  await client.GET('/v1/projects/{projectId}/invocations/{invocationId}', {
    params: { path: { projectId: project.id, invocationId: invoked.invocationId } },
  }),
);

// What the document must keep refusing at compile time: a route without its path parameters, a project
// without its slug. If the document loosened either, these directives would be unused and tsc would fail.
if (process.env.TOOLGATE_NEVER) {
  await client.POST('/v1/projects/{projectId}/tools/{toolName}/invoke', {
    // @ts-expect-error toolName is a path parameter of the invoke route
    params: { path: { projectId: project.id } },
    body: { arguments: {} },
  });
  // @ts-expect-error slug is required
  await client.POST('/v1/projects', { body: { name: 'No slug' } });
}

process.stdout.write(
  `${JSON.stringify({
    project: { id: project.id, shellEnabled: project.shellEnabled },
    toolCounts,
    invoked: { status: invoked.status, invocationId: invoked.invocationId },
    refusal: refusal ? { code: refusal.code, issues: refusal.issues?.length ?? 0, usage: refusal.usage } : null,
    logged: logged.map((entry) => ({ id: entry.id, tool: entry.tool, status: entry.status })),
    invocation: { id: invocation.id, tool: invocation.tool, status: invocation.status },
  })}\n`,
);
