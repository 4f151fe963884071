import { SKILL_MAX_TOOLS, SKILL_TOOL_MAX_TIMEOUT_MS } from './skills.limits.js';

const TOOL_NAME = { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$', description: 'What model providers accept: ^[a-zA-Z0-9_-]{1,64}$' };
const HEADERS = {
  type: 'object',
  additionalProperties: { type: 'string', maxLength: 8192 },
  propertyNames: { pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$" },
  maxProperties: 32,
};

const PROVIDER_SLUG = { type: 'string', pattern: '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$', description: "The auth provider's slug" };
const AUTH_AS = {
  type: 'string',
  enum: ['user', 'tenant'],
  description: "user (the default): the call's end user; tenant: the tenant's own connection",
};

// An MCP source that asks for OAuth: a provider of the tenant's, or one Toolgate discovers from the server's 401.
const SOURCE_AUTH = {
  type: 'object',
  description:
    "Send an access token as Authorization: Bearer to the server (only to its origin): from a connection to `provider`, or, with `discover: true`, to the authorization server the server names in its 401 (MCP authorization: protected resource metadata, a client ID metadata document or dynamic registration, `resource` bound to the server's URL). The tools are read with the connection of the user the registering request names (Toolgate-User), else the tenant's own",
  properties: {
    provider: PROVIDER_SLUG,
    discover: {
      type: 'boolean',
      const: true,
      description: 'Find the authorization server from the server’s 401 and register Toolgate there',
    },
    as: AUTH_AS,
  },
  oneOf: [{ required: ['provider'] }, { required: ['discover'] }],
  additionalProperties: false,
};

const UPSTREAM_URL = { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 2048 };

// The registration body of a skill, validated with AJV (and published as is in the OpenAPI document).
// The tools' own inputSchema and outputSchema are vetted separately: see schema-vetting.ts.
export const SKILL_BODY_SCHEMA = {
  type: 'object',
  properties: {
    name: { ...TOOL_NAME, description: 'Unique among the tenant’s skills' },
    version: { type: 'string', pattern: '^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$', description: 'e.g. 1.0.0; a PUT must bring a new one' },
    description: { type: 'string', maxLength: 4096 },
    source: {
      type: 'object',
      description: 'Instead of tools: import the tools of an MCP server (Streamable HTTP) at registration',
      properties: {
        type: { const: 'mcp' },
        url: UPSTREAM_URL,
        headers: { ...HEADERS, description: 'Sent on every request to the server; stored encrypted, shown masked' },
        tools: {
          type: 'array',
          items: { type: 'string', minLength: 1, maxLength: 128 },
          minItems: 1,
          maxItems: 128,
          uniqueItems: true,
          description: 'Only these upstream tools (default: all of them)',
        },
        auth: SOURCE_AUTH,
        trustAnnotations: {
          type: 'boolean',
          description:
            "Serve the server's own tool annotations (readOnlyHint, destructiveHint…). Off by default: an upstream server's hints are its claims, so its tools are served as reaching the network, not read-only, destructive and not idempotent, whatever it says",
        },
      },
      required: ['type', 'url'],
      additionalProperties: false,
    },
    tools: {
      type: 'array',
      minItems: 1,
      maxItems: SKILL_MAX_TOOLS,
      items: {
        type: 'object',
        properties: {
          name: TOOL_NAME,
          description: { type: 'string', minLength: 1, maxLength: 4096 },
          inputSchema: {
            type: 'object',
            description: 'JSON Schema (draft-07, or 2020-12 when $schema names it) of the arguments; "type": "object"',
          },
          outputSchema: { type: 'object' },
          executor: {
            oneOf: [
              {
                type: 'object',
                properties: {
                  type: { const: 'http' },
                  url: { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 2048 },
                  method: { type: 'string', enum: ['POST', 'PUT', 'PATCH'] },
                  headers: HEADERS,
                  auth: {
                    type: 'object',
                    description:
                      "Send an access token from an auth provider's connection as Authorization: Bearer (only to the provider's apiHosts): the end user's (Toolgate-User) or the tenant's own. Without a usable connection the call answers authorization_required",
                    properties: {
                      provider: {
                        type: 'string',
                        pattern: '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$',
                        description: "The auth provider's slug",
                      },
                      scopes: {
                        type: 'array',
                        items: { type: 'string', pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,256}$' },
                        maxItems: 50,
                        uniqueItems: true,
                        description: 'Scopes the connection must have',
                      },
                      as: {
                        type: 'string',
                        enum: ['user', 'tenant'],
                        description: "user (the default): the call's end user; tenant: the tenant's own connection",
                      },
                    },
                    required: ['provider'],
                    additionalProperties: false,
                  },
                },
                required: ['type', 'url'],
                additionalProperties: false,
              },
              {
                type: 'object',
                properties: {
                  type: { const: 'mcp' },
                  url: UPSTREAM_URL,
                  headers: HEADERS,
                  tool: { type: 'string', minLength: 1, maxLength: 128, description: 'The tool’s name on the MCP server' },
                  auth: {
                    type: 'object',
                    description: "Set by the source's import: the connection whose token the server is called with",
                    properties: { provider: PROVIDER_SLUG, as: AUTH_AS },
                    required: ['provider'],
                    additionalProperties: false,
                  },
                },
                required: ['type', 'url', 'tool'],
                additionalProperties: false,
              },
              {
                type: 'object',
                properties: {
                  type: { const: 'command' },
                  argv: { type: 'array', items: { type: 'string', maxLength: 4096 }, minItems: 1, maxItems: 256 },
                },
                required: ['type', 'argv'],
                additionalProperties: false,
              },
            ],
          },
          timeoutMs: { type: 'integer', minimum: 100, maximum: SKILL_TOOL_MAX_TIMEOUT_MS },
          mode: {
            type: 'string',
            enum: ['async', 'sync'],
            description: 'sync: a command run in the worker pool (an http endpoint is awaited on the event loop in either mode)',
          },
          title: { type: 'string', minLength: 1, maxLength: 128, description: 'A display name for people (MCP title)' },
          annotations: {
            type: 'object',
            properties: {
              readOnly: { type: 'boolean' },
              destructive: { type: 'boolean' },
              idempotent: { type: 'boolean' },
              openWorld: { type: 'boolean' },
            },
            additionalProperties: false,
          },
        },
        required: ['name', 'description', 'inputSchema', 'executor'],
        additionalProperties: false,
      },
    },
  },
  required: ['name', 'version', 'description'],
  oneOf: [{ required: ['tools'] }, { required: ['source'] }],
  additionalProperties: false,
} as const;
