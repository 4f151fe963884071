import type { UpstreamTarget } from '../skills/mcp/upstream-mcp-clients.js';

// One upstream MCP server behind the project's enabled MCP skills, whose resources and prompts a project's
// endpoint offers as its own (mcp-federation.ts): every skill tool with the same URL, headers and auth is the same
// server. `name` is the first such skill's source (skill:<name>@<version>).
// A leaf of its own: the prompt rounds (input-required/prompt-rounds.ts) name it without importing the
// federation that calls them.
export interface FederatedSource {
  // The upstream's URL and headers: each listing builds its own source objects, so they compare by this.
  key: string;
  name: string;
  target: UpstreamTarget;
  timeoutMs: number;
  // The connection its tools act with (an MCP source that asks for OAuth); every request carries its token.
  auth?: { provider: string; as?: 'user' | 'tenant' };
}

// What a source offers besides its tools.
export interface FederatedFeatures {
  resources: boolean;
  prompts: boolean;
  completions: boolean;
  // Log messages during its tools' calls (relayed to a client that set a level).
  logging: boolean;
}
