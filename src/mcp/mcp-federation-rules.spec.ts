import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../execution/tool-error.js';
import { asMcpFailure, isWorkspaceUri, unique } from './mcp-federation-rules.js';

describe('the rules for what MCP sources list and answer', () => {
  it('keeps a key one source lists (once), and drops one two sources list', () => {
    const listed = [
      { item: 'a://1', source: 'x' },
      { item: 'a://1', source: 'x' },
      { item: 'b://2', source: 'x' },
      { item: 'b://2', source: 'y' },
      { item: 'c://3', source: 'y' },
    ];
    expect(unique(listed, (uri) => uri)).toEqual([
      { item: 'a://1', source: 'x' },
      { item: 'c://3', source: 'y' },
    ]);
  });

  it('counts every spelling of the file scheme as the workspace’s', () => {
    for (const uri of ['file:///a', 'FILE:///a', 'File://host/a', ' file:///a', 'file:a']) expect(isWorkspaceUri(uri)).toBe(true);
    for (const uri of ['test://file:///a', 'files:///a', 'http://x/file:']) expect(isWorkspaceUri(uri)).toBe(false);
  });

  it('answers an upstream timeout -32001 and audits it as a timeout; other failures as errors with their code', () => {
    expect(asMcpFailure(new McpError(ErrorCode.RequestTimeout, 'Request timed out'), false)).toMatchObject({
      status: 'timeout',
      code: 'upstream_timeout',
    });
    expect(asMcpFailure(new McpError(-32002, 'gone'), false)).toMatchObject({ status: 'error', code: 'upstream_rpc_-32002' });
    const unreachable = asMcpFailure(new ToolError('upstream_unavailable', 'The MCP server at x could not be used', true), false);
    expect(unreachable).toMatchObject({
      status: 'error',
      code: 'upstream_unavailable',
      error: expect.objectContaining({ code: ErrorCode.InternalError }),
    });
    expect(asMcpFailure(new Error('boom'), false)).toMatchObject({
      status: 'error',
      code: 'internal_error',
      message: expect.not.stringContaining('boom'),
    });
    expect(asMcpFailure(new Error('aborted'), true)).toMatchObject({ code: 'client_gone' });
  });
});
