import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp, TestTenant } from '../../support/test-app.js';

// The _meta every request of revision 2026-07-28 carries: its revision and the client's capabilities.
export const MODERN_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
} as const;

// params with the envelope of revision 2026-07-28 under what _meta they carry (theirs wins).
export const withEnvelope = (params: Record<string, unknown>): Record<string, unknown> => ({
  ...params,
  _meta: { ...MODERN_ENVELOPE, ...(params._meta ?? {}) },
});

// One JSON-RPC request of protocol revision 2026-07-28 to the project's endpoint, with the headers that
// revision asks for (`Mcp-Method`, and `Mcp-Name` where the method names something) and the _meta envelope;
// the answer as sent.
export async function postModern(
  t: TestApp,
  projectId: string,
  auth: Record<string, string>,
  method: string,
  params: Record<string, unknown>,
  name?: string,
) {
  const port = t.port;
  const res = await fetch(`http://127.0.0.1:${port}/v1/projects/${projectId}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
      ...auth,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: withEnvelope(params) }),
  });
  return { status: res.status, body: (await res.json()) as ModernBody };
}

// What a test reads of an answer: the result's fields, or the error.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ModernBody = { result?: any; error?: { code: number; message: string } };

// An MCP client as users run it: the official SDK Client over Streamable HTTP, with the tenant's key.
// `endpoint`: the path below the project (a toolset's is /toolsets/<slug>/mcp).
export async function connectMcp(t: TestApp, projectId: string, headers: Record<string, string>, endpoint = '/mcp'): Promise<Client> {
  const port = t.port;
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/v1/projects/${projectId}${endpoint}`), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'toolgate-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export const mcpClientFor = (t: TestApp, tenant: TestTenant, projectId: string) => connectMcp(t, projectId, tenant.auth);

export interface TextResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export const textOf = (result: TextResult) => result.content.map((c) => c.text ?? '').join('');

// What a JSON-RPC call was refused with (the SDK client throws an McpError); a result fails the test.
export async function refusedWith(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a JSON-RPC error, got a result');
}
