import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp, TestTenant } from '../../support/test-app.js';
import { listen } from '../tools/tool-test-kit.js';

// An MCP client as users run it: the official SDK Client over Streamable HTTP, with the tenant's key.
// `endpoint`: the path below the project (a toolset's is /toolsets/<slug>/mcp).
export async function connectMcp(t: TestApp, projectId: string, headers: Record<string, string>, endpoint = '/mcp'): Promise<Client> {
  const port = await listen(t);
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

