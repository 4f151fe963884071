import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { CLIENT_CAPABILITIES_META } from './mcp-tasks.service.js';
import type { ClientRound } from './input-required/input-rounds.js';

// MCP protocol revision 2026-07-28 over Streamable HTTP, beside the revisions that open with initialize.
// A client of this revision sends no initialize: every POST names the revision in MCP-Protocol-Version
// (and in params._meta, beside the client's capabilities), and carries the standard request headers Mcp-Method (the body's method) and,
// for the methods that address one tool, prompt or resource, Mcp-Name (its name or URI). Proxies, rate
// limiters and gateways in front route on those headers while the server runs the body, so a request whose
// headers and body disagree is refused before anything runs (-32020, HTTP 400).
//
// The v2 server SDK (@modelcontextprotocol/server) speaks this revision too, but serves it differently from
// this endpoint where clients see it, so only its -32022 error (UnsupportedProtocolVersionError) is used:
// - it routes on the body, not the header (classifyInboundRequest): a request must carry the _meta envelope
//   with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities, else it is
//   refused -32602 (HTTP 400), as here (envelopeProblem); this endpoint takes MCP-Protocol-Version as the
//   revision, so a revision it does not speak, named in the header alone, is -32602 there and -32022 here;
// - its header check (validateStandardRequestHeaders, not exported) lets an Mcp-Name through on a method
//   that names nothing and knows no Mcp-Name for resources/subscribe and unsubscribe: -32020 here;
// - its server/discover (Server._ondiscover) lists only the modern revisions; this one lists every
//   revision the endpoint speaks, the initialize ones too;
// - the methods themselves are the endpoint's direct answers, kept for their speed as under the other
//   revisions; a per-request v2 Server would be built only to answer what they already answer.
export const MODERN_REVISIONS: readonly string[] = ['2026-07-28'];
const FIRST_MODERN_REVISION = '2026-07-28';
// Every revision this endpoint speaks: the modern one, then those the SDK's initialize negotiates.
export const ALL_REVISIONS: readonly string[] = [...MODERN_REVISIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

export const HEADER_MISMATCH = -32020;
export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
// Where a result of this revision names the server that produced it (ResultMetaObject): server/discover's
// only place for it, as the official SDKs read it.
export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';

// How long a client may keep a listing, and who may share it. A project's tool and resource lists depend
// on the tenant, the key's binding and the project's skills: private to the caller, and short, since a
// skill enabled elsewhere changes them. What the server offers (discover) depends on the key too (resources
// where it may call read_file), so it is private as well, but rarely changes.
export const TOOLS_LIST_CACHE = { ttlMs: 60_000, cacheScope: 'private' } as const;
export const DISCOVER_CACHE = { ttlMs: 3_600_000, cacheScope: 'private' } as const;
// A resource read: a workspace file (or an upstream's resource) may change on the next write, and what the
// key may read is its own: private, and not to be reused without asking again.
export const RESOURCE_READ_CACHE = { ttlMs: 0, cacheScope: 'private' } as const;

// Methods of the revisions that open with initialize that 2026-07-28 removed (a client of it asks
// server/discover instead, sends its log level per request, and has no subscriptions on a stateless
// endpoint): answered as any method the server does not implement, 404 with -32601.
export const REMOVED_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);

// Why a request of this revision lacks the envelope every request carries (params._meta with the
// protocol version and the client's capabilities; the client's name is optional), or null. -32602, HTTP 400.
export function envelopeProblem(message: Record<string, unknown>): string | null {
  const params = isPlainObject(message.params) ? message.params : {};
  if (!isPlainObject(params._meta))
    return `Under protocol revision 2026-07-28 every request carries params._meta with "${PROTOCOL_VERSION_META}" and "${CLIENT_CAPABILITIES_META}"; this one has no params._meta`;
  if (typeof params._meta[PROTOCOL_VERSION_META] !== 'string')
    return `params._meta["${PROTOCOL_VERSION_META}"] is required: the protocol revision of the request (as in MCP-Protocol-Version)`;
  if (!isPlainObject(params._meta[CLIENT_CAPABILITIES_META]))
    return `params._meta["${CLIENT_CAPABILITIES_META}"] is required: the client's capabilities, an object ({} when it declares none)`;
  return null;
}

// Whether a message carries the envelope of the modern revisions (its protocol version in params._meta):
// such a client is answered by those revisions' rules, an unsupported version included.
export function carriesModernEnvelope(body: unknown): boolean {
  if (!isPlainObject(body) || !isPlainObject(body.params) || !isPlainObject(body.params._meta)) return false;
  return body.params._meta[PROTOCOL_VERSION_META] !== undefined;
}

// The body field Mcp-Name mirrors, by method.
const NAME_SOURCE = new Map<string, string>([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
  ['resources/subscribe', 'uri'],
  ['resources/unsubscribe', 'uri'],
  // The tasks extension: the task a request addresses, so that a balancer can route it.
  ['tasks/get', 'taskId'],
  ['tasks/update', 'taskId'],
  ['tasks/cancel', 'taskId'],
]);

// A revision of the modern era (a date from 2026-07-28 on), which this endpoint answers itself.
export const isModernRevision = (version: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= FIRST_MODERN_REVISION;

// A header value as the client meant it: printable ASCII as sent, anything else as =?base64?<value>?=.
function decodeHeader(value: string): string | null {
  const encoded = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (!encoded) return value;
  const text = Buffer.from(encoded[1], 'base64').toString('utf8');
  // Base64 that does not round-trip, or is not UTF-8, was not written by a client.
  return Buffer.from(text, 'utf8').toString('base64').replace(/=+$/, '') === encoded[1].replace(/=+$/, '') ? text : null;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// Why the standard headers disagree with the message, or null when they agree. Mcp-Method is required on
// every message; Mcp-Name whenever the body names its target, and never without one; a protocol version in
// params._meta must be the header's.
export function headerMismatch(headers: Record<string, string>, message: Record<string, unknown>, version: string): string | null {
  const method = message.method as string;
  const sentMethod = headers['mcp-method'];
  if (sentMethod === undefined)
    return `The Mcp-Method header is required under protocol revision ${version}; send Mcp-Method: ${printable(method)}`;
  if (decodeHeader(sentMethod) !== method)
    return `The Mcp-Method header (${printable(sentMethod)}) does not match the body's method (${printable(method)})`;
  const params = isPlainObject(message.params) ? message.params : {};
  const field = NAME_SOURCE.get(method);
  const target = field !== undefined && typeof params[field] === 'string' ? params[field] : undefined;
  const sentName = headers['mcp-name'];
  if (target === undefined && sentName !== undefined)
    return `The Mcp-Name header (${printable(sentName)}) names a target, but the body of ${printable(method)} names none`;
  if (target !== undefined && sentName === undefined)
    return `The Mcp-Name header is required for ${method} under protocol revision ${version}; send the body's ${field}`;
  if (target !== undefined && decodeHeader(sentName) !== target)
    return `The Mcp-Name header (${printable(sentName)}) does not match the body's ${field} (${printable(target)})`;
  const meta = isPlainObject(params._meta) ? params._meta : {};
  const bodyVersion = meta[PROTOCOL_VERSION_META];
  if (bodyVersion !== undefined && bodyVersion !== version) {
    return `The MCP-Protocol-Version header (${printable(version)}) does not match _meta["${PROTOCOL_VERSION_META}"] (${printable(JSON.stringify(bodyVersion))})`;
  }
  return null;
}

const printable = (value: string): string => `'${value.replace(/[^\x20-\x7e]/g, '?').slice(0, 128)}'`;

const isStringMap = (value: unknown): value is Record<string, string> =>
  isPlainObject(value) && Object.values(value).every((v) => typeof v === 'string');

// A resource, prompt or completion request of revision 2026-07-28, answered beside the fast path's messages.
export type ResourceRequest =
  | { method: 'resources/list'; cursor?: string }
  | { method: 'resources/templates/list' }
  | { method: 'resources/read'; uri: string }
  | {
      method: 'completion/complete';
      ref: { type: string; uri?: string; name?: string };
      argument: { name: string; value: string };
      context?: { arguments?: Record<string, string> };
    }
  | { method: 'prompts/list'; cursor?: string }
  | { method: 'prompts/get'; name: string; arguments?: Record<string, string>; round?: ClientRound };

// The capability a resource, prompt or completion method needs declared.
export const capabilityOf = (method: ResourceRequest['method']): 'resources' | 'prompts' | 'completions' =>
  method.startsWith('prompts/') ? 'prompts' : method === 'completion/complete' ? 'completions' : 'resources';

// The request, or why its params are not what the method takes (-32602).
export function resourceMessage(method: ResourceRequest['method'], params: Record<string, unknown>): ResourceRequest | string {
  switch (method) {
    case 'resources/list':
    case 'prompts/list':
      if (params.cursor !== undefined && typeof params.cursor !== 'string') return 'params.cursor must be a string';
      return { method, ...(typeof params.cursor === 'string' ? { cursor: params.cursor } : {}) };
    case 'resources/templates/list':
      return { method };
    case 'resources/read':
      return typeof params.uri === 'string' ? { method, uri: params.uri } : 'resources/read needs params.uri, the resource to read';
    case 'completion/complete': {
      const { ref, argument, context } = params;
      const badRef =
        !isPlainObject(ref) ||
        typeof ref.type !== 'string' ||
        (ref.uri !== undefined && typeof ref.uri !== 'string') ||
        (ref.name !== undefined && typeof ref.name !== 'string');
      if (badRef) return 'params.ref must be { type, uri } or { type, name }';
      const { type, uri, name } = ref as { type: string; uri?: string; name?: string };
      if (!isPlainObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string')
        return 'params.argument must be { name, value }, both strings';
      const contextArguments = isPlainObject(context) ? context.arguments : undefined;
      if (context !== undefined && (!isPlainObject(context) || (contextArguments !== undefined && !isStringMap(contextArguments))))
        return 'params.context must be { arguments }, a map of strings';
      return {
        method,
        ref: { type, ...(uri !== undefined ? { uri } : {}), ...(name !== undefined ? { name } : {}) },
        argument: { name: argument.name, value: argument.value },
        ...(isStringMap(contextArguments) ? { context: { arguments: contextArguments } } : {}),
      };
    }
    case 'prompts/get':
      if (typeof params.name !== 'string') return 'prompts/get needs params.name, the prompt to get';
      if (params.arguments !== undefined && !isStringMap(params.arguments)) return 'params.arguments must be a map of strings';
      return { method, name: params.name, ...(params.arguments !== undefined ? { arguments: params.arguments } : {}) };
  }
}
