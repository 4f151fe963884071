import type { JsonSchema } from './validation/schema-type.js';
import type { ToolLogs } from './tool-logs.js';
import type { InputRound } from './input-required.js';

export interface ToolAnnotations {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  // Reaches beyond the workspace (the network, other systems).
  openWorld: boolean;
}

// `builtin`, or `skill:<skillName>@<version>` for tenant-registered tools.
export type ToolSource = string;

export interface ToolDefinition {
  name: string;
  // A display name for people (MCP's `title`); the name stays what a model calls.
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  // The longest a call may run; a request may ask for less, never more.
  timeoutMs: number;
  source: ToolSource;
}

// What an executor knows about the call it runs.
export interface ToolContext {
  tenantId: string;
  projectId: string;
  invocationId: string;
  // Real path of the project's workspace (its quota is the workspace's).
  workspace: string;
  // Where a file tool resolves its paths, when a toolset confines it to a directory of the workspace
  // (workspace + that directory); absent: the workspace itself. Every file tool's paths go through it.
  fileRoot?: string;
  project: { shellEnabled: boolean; shellAllowlist: string[] };
  // The end user the call is for (Toolgate-User): a tool acting with people's connections acts as this one.
  user?: string;
  // Aborted at the timeout or when the client goes away; executors pass it to their I/O.
  signal: AbortSignal;
  timeoutMs: number;
  // Present when the caller listens for progress (an MCP client that sent a progressToken).
  onProgress?: (report: ToolProgress) => void;
  // Present when the caller asked for log messages (an MCP client that set a level): those the tool's
  // upstream MCP server sends at or above that level go there.
  logs?: ToolLogs;
  // Present for an MCP client of protocol revision 2026-07-28: what it declared and answered, which an MCP
  // source of that revision gets with the call; such a source may ask for input (InputRequired).
  inputRound?: InputRound;
}

// What a caller listening to a running call receives: its progress reports and its log messages.
export type ToolListeners = Pick<ToolContext, 'onProgress' | 'logs'>;

// How far a call has come, in the tool's own numbers (an upstream MCP server's notifications/progress).
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

// One tool: its definition and the code that runs it. Arguments arrive already validated against
// `definition.inputSchema`. Throw an AppError to refuse (4xx), a ToolError for a failure the model
// should read; return the result.
export interface ToolExecutor<Args = Record<string, unknown>> {
  readonly definition: ToolDefinition;
  // Runs a child process: such calls also count against the tighter per-tenant command rate limit.
  readonly spawnsProcesses?: boolean;
  // Its result is an upstream MCP server's answer: `{ content }` as that server sent it, when it sent no
  // structuredContent, which the MCP endpoint hands on unchanged (images, audio, embedded resources).
  readonly relaysMcpContent?: boolean;
  // The upstream MCP server it calls (a tool of an MCP source): the MCP endpoint relays that server's
  // resources and prompts to a key that may call the tool, with the connection `auth` names as its calls are.
  readonly mcpUpstream?: { url: string; headers?: Record<string, string>; auth?: { provider: string; as?: 'user' | 'tenant' } };
  // Checks its signal just before its change to the workspace, and finishes that change once begun: at its
  // deadline the call is awaited, not abandoned, so its answer and audit row say what happened (a change
  // that landed is ok; a `timeout` changed nothing).
  readonly settlesOnStop?: boolean;
  execute(args: Args, context: ToolContext): Promise<unknown>;
}
