import { Injectable } from '@nestjs/common';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isLogLevel, LOG_LEVELS, type LogLevel } from '../execution/tool-logs.js';
import { type CallRequest, keyInProject, type McpCaller } from './mcp-caller.js';
import { declaresUrlElicitation, McpClientCapabilities } from './mcp-client-capabilities.js';
import type { FastMessage } from './mcp-fast-path.js';
import { McpLogLevels } from './mcp-log-levels.js';
import { McpOfferings } from './mcp-offerings.js';

export const badLevel = (where: string) => `${where} must be one of ${LOG_LEVELS.join(', ')}`;

// What a stateless endpoint still remembers of a key's session in a project, between its POSTs and on every
// instance: the level its log messages are asked at, and whether its client takes URL-mode elicitation.
@Injectable()
export class McpKeySessions {
  constructor(
    private readonly logLevels: McpLogLevels,
    private readonly clientCapabilities: McpClientCapabilities,
    private readonly offerings: McpOfferings,
  ) {}

  // A new session (an initialize, however it came): the level an earlier one set no longer holds. A
  // toolset's endpoint has no logging, and leaves the project endpoint's level as it is.
  // What the client declared that later calls depend on (URL-mode elicitation) is remembered for the key in
  // the project, on the toolset's endpoints too (their tools may need a connection as well).
  async newSession(caller: McpCaller, capabilities: unknown): Promise<void> {
    await this.clientCapabilities.remember(keyInProject(caller), declaresUrlElicitation(capabilities));
    if (!caller.catalogue) await this.logLevels.reset(keyInProject(caller));
  }

  // Whether the client takes -32042 with a URL elicitation: 2026-07-28 says so in each request, the revisions
  // before it at initialize (remembered).
  elicitsUrl(caller: McpCaller, request: CallRequest): Promise<boolean> {
    if (request.elicitUrl !== undefined) return Promise.resolve(request.elicitUrl);
    return this.clientCapabilities.urlElicitation(keyInProject(caller));
  }

  // The level a call's log messages are asked at: revision 2026-07-28 names it in the request, the earlier
  // ones set it with logging/setLevel. A toolset's endpoint declares no logging (its tools are the
  // toolset's, under its names, and the upstream's messages name the tools behind them): none there.
  async logLevelOf(caller: McpCaller, message: Extract<FastMessage, { kind: 'call' }>): Promise<LogLevel | undefined> {
    if (caller.catalogue) return undefined;
    if (message.modern) return message.logLevel as LogLevel | undefined;
    return (await this.logLevels.of(keyInProject(caller))) ?? undefined;
  }

  // logging/setLevel, where the capabilities declare logging (an MCP source this key may use declares it).
  async setLogLevel(caller: McpCaller, level: unknown): Promise<Record<string, never>> {
    if (!(await this.offerings.capabilities(caller)).logging) throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
    if (!isLogLevel(level)) throw new McpError(ErrorCode.InvalidParams, badLevel('params.level'));
    await this.logLevels.set(keyInProject(caller), level);
    return {};
  }
}
