// What a skill tool's executor is, as stored with the skill and handed, as plain data, to whatever runs the
// call: the runner (on the event loop or a pool thread), the upstream MCP clients, the compiler that vets it.
// Types only, so that none of those need import another to name them.

export interface HttpExecutorSpec {
  type: 'http';
  url: string;
  method?: 'POST' | 'PUT' | 'PATCH';
  headers?: Record<string, string>;
  // A connection's access token goes as Authorization: Bearer (src/connections).
  auth?: { provider: string; scopes?: string[]; as?: 'user' | 'tenant' };
}

export interface CommandExecutorSpec {
  type: 'command';
  argv: string[];
}

// What each imported tool's executor carries: the provider whose connection its calls use.
export interface McpExecutorAuth {
  provider: string;
  as?: 'user' | 'tenant';
}

export interface McpExecutorSpec {
  type: 'mcp';
  url: string;
  headers?: Record<string, string>;
  // The tool's name on the upstream server (the skill may list it under the same name).
  tool: string;
  // The connection whose token goes with each request (set by the source's import; see mcp-source-auth.ts).
  auth?: McpExecutorAuth;
}

export type SkillExecutorSpec = HttpExecutorSpec | CommandExecutorSpec | McpExecutorSpec;
