// The Cedar schema every policy set is validated against (strict mode) and every call is decided under,
// published at GET /v1/policies/schema. One action, `call`; the principal is the calling key, the resource
// the tool in its project (and toolset). What the call asks for is in the context, already normalised:
// a file tool's paths relative to the workspace with `..` folded and symlinks followed, fetch_url's host
// lower-cased without a trailing dot, a command's argv.
export const POLICY_NAMESPACE = 'Toolgate';

export const POLICY_SCHEMA = `// Toolgate's Cedar schema: the principal, action, resource and context of every tool call.
namespace Toolgate {
  // The role of an API key: principal in Toolgate::Role::"agent".
  entity Role enum ["admin", "agent", "approver"];

  // The key a call came with. An OAuth access token is a key too: oauthClient names its client.
  entity Key in [Role] = {
    name: String,
    role: String,
    oauthClient?: String,
  };

  entity Project;
  // A call through a toolset: the tool is in the toolset (by slug) as well as in the project.
  entity Toolset in [Project];

  // A tool by its real name: resource == Toolgate::Tool::"write_file".
  entity Tool in [Project, Toolset] = {
    name: String,
    // "@commands", "@writes", "@network", "@all" (as in approvalRequired).
    classes: Set<String>,
    // "builtin", "skill" (http or command), "mcp" (a tool of an MCP source), "toolset" (search_tools).
    source: String,
    // Through a toolset: its slug and the name the model called the tool by.
    toolset?: String,
    exposedName: String,
  };

  // The call's arguments, each top-level one as a tag: a string as it is, any other value as JSON text.
  entity Arguments tags String;

  type CallContext = {
    arguments: Arguments,
    // "rest" (invoke, batch) or "mcp".
    channel: String,
    time: datetime,
    // File tools: the path written or read (move_file: its destination), and move_file's source,
    // relative to the workspace root after normalisation ("docs/a.md"; "../x" when it leads outside).
    path?: String,
    source?: String,
    // Every path the call names (read_multiple_files: each of them).
    paths: Set<String>,
    // fetch_url: the destination host, lower case, without a trailing dot, IDN as punycode.
    host?: String,
    // shell_exec: the argv, the command line (argv joined by single spaces) and the program (argv[0]).
    argv: Set<String>,
    command?: String,
    program?: String,
  };

  action call appliesTo {
    principal: [Key],
    resource: [Tool],
    context: CallContext,
  };
}
`;
