import type { ToolListeners } from '../execution/tool-definition.js';
import type { CallPrincipal } from '../tools/tool-call.gate.js';
import type { ToolCatalogue } from '../tools/tool-catalogue.js';
import type { McpRequestRef } from './mcp-cancellations.js';
import type { FastMessage } from './mcp-fast-path.js';
import type { KeyInProject } from './mcp-key-scope.js';
import type { ResourceRequest } from './mcp-modern.js';
import type { TaskCaller } from './mcp-tasks.service.js';
import type { ClientRound } from './input-required/input-rounds.js';

// What the parts of the MCP endpoint hand each other (mcp-endpoint.service.ts and the files it calls):
// types and small pure helpers only, so that each part names them without importing another part.

// One POST, once its key and project are checked.
export interface McpCaller {
  tenantId: string;
  projectId: string;
  // The key: tools/list shows and tools/call takes only the tools it is bound to.
  principal: CallPrincipal;
  // Aborted when the HTTP client goes away; a tools/call runs under it.
  controller: AbortController;
  // Aborted when the key is revoked or expires: it stops a call under an Idempotency-Key too.
  keyEnded: AbortSignal;
  // Another view of the project's tools (a toolset): tools/list shows it and tools/call goes through it.
  catalogue?: ToolCatalogue;
  // The MCP-Protocol-Version the POST names, if any: tools/list marks tools for tasks where it defines them.
  revision?: string;
}

// What the client listens for while a call runs: its progress (it sent a progressToken), and its log
// messages (it set a level). Both travel on the call's event stream.
export type Listening = ToolListeners;

export interface CallRequest extends Listening {
  id?: string | number;
  signal?: AbortSignal;
  idempotencyKey?: unknown;
  // Revision 2026-07-28: whether the request's client capabilities declare URL-mode elicitation.
  elicitUrl?: boolean;
  // Revision 2026-07-28: the client's multi round-trip round (input-required/input-rounds.ts).
  round?: ClientRound;
}

// A message the endpoint answers itself: the fast path's, and revision 2026-07-28's resources and tasks.
export type EndpointMessage =
  | FastMessage
  | { kind: 'resource'; id: string | number; modern: true; request: ResourceRequest; elicitUrl: boolean }
  | { kind: 'task'; id: string | number; modern: true; method: 'tasks/get' | 'tasks/update' | 'tasks/cancel'; taskId: unknown };
export type EndpointRequest = Exclude<EndpointMessage, { kind: 'notification' | 'cancel' }>;

export const taskCaller = (caller: McpCaller): TaskCaller => ({ ...keyInProject(caller), keyName: caller.principal.keyName });

// The key of the POST, in its project: whose tasks and logging/setLevel level are (mcp-key-scope.ts).
export const keyInProject = (caller: Pick<McpCaller, 'tenantId' | 'projectId' | 'principal'>): KeyInProject => ({
  tenantId: caller.tenantId,
  projectId: caller.projectId,
  apiKeyId: caller.principal.apiKeyId,
});

export const requestRef = (caller: McpCaller, requestId: string | number): McpRequestRef => ({
  tenantId: caller.tenantId,
  projectId: caller.projectId,
  principalId: caller.principal.apiKeyId,
  requestId,
});

// A JSON-RPC request id as MCP allows it: a string or an integer.
export const validId = (id: unknown): id is string | number => typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
