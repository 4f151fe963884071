import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { isRefusedAppScheme } from '../config/redirect-schemes.js';
import { safeFetch } from '../execution/net/safe-fetch.js';
import { ToolError } from '../execution/tool-error.js';
import { invalidClientMetadata, invalidRedirectUri } from './oauth.errors.js';

export interface OAuthClientInfo {
  clientId: string;
  name: string;
  redirectUris: string[];
  // The origin a Client ID Metadata Document was fetched from (what the person is shown as verified);
  // null for a client that registered itself, whose name is only its own claim.
  verifiedOrigin: string | null;
}

// A client ID metadata document is small; anything larger is refused, not cut.
export const CLIENT_METADATA_MAX_BYTES = 5 * 1024;
const NAME_MAX = 200;
// A redirect URI is https, http to a loopback address, or a native app's own scheme (RFC 8252 7.1): one the
// operator lists in OAUTH_APP_SCHEMES (cursor, vscode…), or, for a client with a metadata document, the
// reverse of its client_id's host (com.example.app for app.example.com, or a name under it), a domain the
// client shows it controls. Anything else (script, browser-internal, cleartext network, mail and telephone
// schemes, the operating system's protocol handlers, a dotted name anyone could claim) is refused: an
// allowlist, because the handlers are too many to list.
// The written form: printable ASCII only (an IDN host as punycode, a path percent-encoded), no backslash, so
// the person deciding reads exactly where the browser goes (no bidi or zero-width tricks, no homographs).
const PRINTABLE_URI = /^[\x21-\x5b\x5d-\x7e]+$/;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

// Client ID Metadata Documents (the MCP authorization spec's preferred registration): the client_id is an
// HTTPS URL and the document there names the client and its redirect URIs. It is fetched like a fetch_url
// call (no private, loopback or metadata address, the address checked being the one connected to), HTTPS
// only, at most 5 KiB, within OAUTH_CLIENT_METADATA_TIMEOUT_MS, without following redirects.
@Injectable()
export class ClientMetadataDocuments {
  private readonly allowHosts: string[];
  private readonly ca: Buffer | undefined;
  private readonly timeoutMs: number;
  private readonly appSchemes: readonly string[];

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.appSchemes = config.oauth.appSchemes;
    this.allowHosts = config.oauth.clientMetadataAllowHosts;
    this.ca = config.oauth.clientMetadataCaFile === null ? undefined : readFileSync(config.oauth.clientMetadataCaFile);
    this.timeoutMs = config.oauth.clientMetadataTimeoutMs;
  }

  static isDocumentUrl(clientId: string): boolean {
    return clientId.startsWith('https://');
  }

  async fetch(clientId: string): Promise<OAuthClientInfo> {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      throw invalidClientMetadata(`client_id ${clip(clientId)} is not a URL`);
    }
    if (url.protocol !== 'https:') throw invalidClientMetadata('a client ID metadata document must be served over https');
    if (url.pathname === '/' || url.hash !== '' || url.username !== '' || url.password !== '') {
      throw invalidClientMetadata('a client ID metadata document URL needs a path and no fragment or credentials');
    }
    let answer;
    try {
      answer = await safeFetch(
        {
          url: url.href,
          method: 'GET',
          headers: { accept: 'application/json' },
          timeoutMs: this.timeoutMs,
          maxBytes: CLIENT_METADATA_MAX_BYTES,
        },
        { allowHosts: this.allowHosts, maxRedirects: 0, ca: this.ca },
      );
    } catch (error) {
      // The fetch_url policy's own refusals (url_blocked…) and network failures, timeouts included, say why.
      const why = error instanceof AppError || error instanceof ToolError ? error.message : 'it could not be fetched';
      throw invalidClientMetadata(`The client ID metadata document at ${url.href} was refused: ${why}`);
    }
    if (answer.timedOut)
      throw invalidClientMetadata(`The client ID metadata document at ${url.href} did not arrive within ${this.timeoutMs} ms`);
    if (answer.truncated)
      throw invalidClientMetadata(`The client ID metadata document at ${url.href} is larger than ${CLIENT_METADATA_MAX_BYTES} bytes`);
    if (answer.status !== 200) throw invalidClientMetadata(`The client ID metadata document at ${url.href} answered HTTP ${answer.status}`);
    let document: unknown;
    try {
      document = JSON.parse(answer.bodyEncoding === 'utf8' ? answer.body : Buffer.from(answer.body, 'base64').toString('utf8'));
    } catch {
      throw invalidClientMetadata(`The client ID metadata document at ${url.href} is not JSON`);
    }
    if (!isObject(document) || document.client_id !== clientId) {
      throw invalidClientMetadata(`The document at ${url.href} must be a JSON object whose client_id is its own URL`);
    }
    const method = document.token_endpoint_auth_method;
    if (method !== undefined && method !== 'none') {
      throw invalidClientMetadata(
        `token_endpoint_auth_method '${clip(JSON.stringify(method))}' is not supported; clients here are public ('none')`,
      );
    }
    return {
      clientId,
      name: clientName(document.client_name, url.host),
      redirectUris: checkRedirectUris(document.redirect_uris, this.appSchemes, url.hostname),
      verifiedOrigin: url.origin,
    };
  }
}

// What a registration (RFC 7591) or a metadata document asks for, checked the same way; `documentHost` is
// the host of a metadata document's client_id (null for a registered client).
export function checkRedirectUris(value: unknown, appSchemes: readonly string[], documentHost: string | null): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 10) throw invalidRedirectUri('redirect_uris must list 1 to 10 URIs');
  return value.map((uri) => {
    if (typeof uri !== 'string' || uri.length > 2000)
      throw invalidRedirectUri('each redirect URI must be a string of at most 2000 characters');
    // Shown to the person deciding as written: it must be the URI the browser is sent to, byte for byte.
    if (!PRINTABLE_URI.test(uri)) {
      throw invalidRedirectUri(
        `${clip(JSON.stringify(uri))} must be printable ASCII without spaces or backslashes (a host in punycode, a path percent-encoded)`,
      );
    }
    let parsed: URL;
    try {
      parsed = new URL(uri);
    } catch {
      throw invalidRedirectUri(`${clip(uri)} is not an absolute URI`);
    }
    if (parsed.hash !== '') throw invalidRedirectUri(`${clip(uri)} has a fragment`);
    // user:password@ before a host makes a URI read as one site while it goes to another.
    if (parsed.username !== '' || parsed.password !== '') throw invalidRedirectUri(`${clip(uri)} carries user information before its host`);
    const scheme = parsed.protocol.slice(0, -1);
    // Plain http only back to this machine (a native client's loopback listener, RFC 8252 7.3).
    if (scheme === 'http' && !LOOPBACK.has(parsed.hostname))
      throw invalidRedirectUri(`${clip(uri)}: http is allowed only for a loopback address; use https`);
    if (scheme === 'https' || scheme === 'http') return uri;
    if (isRefusedAppScheme(scheme))
      throw invalidRedirectUri(`${clip(uri)}: the ${scheme}: scheme hands the browser to a system or browser handler, not to an app`);
    if (appSchemes.includes(scheme) || (documentHost !== null && isReverseOf(scheme, documentHost))) return uri;
    const own =
      documentHost === null
        ? 'a scheme the operator lists (OAUTH_APP_SCHEMES); a private-use scheme of your own needs a client ID metadata document'
        : `the reverse of the client_id's host (${reverseOf(documentHost)}:) or a name under it, or a scheme the operator lists (OAUTH_APP_SCHEMES)`;
    throw invalidRedirectUri(`${clip(uri)}: the ${scheme}: scheme cannot receive a code; use https, http to a loopback address, or ${own}`);
  });
}

// OpenID Connect's application_type, which revision 2026-07-28 of the MCP authorization spec asks clients
// to send when they register: a web application's redirect URIs are https on a host other than this
// machine; a native one's (a desktop, mobile or command-line app, or a page served from localhost) are a
// loopback listener or its own private-use scheme. Absent (the revisions before it have no such field), the
// URIs are judged as above alone. The URIs were checked by checkRedirectUris first.
export type ApplicationType = 'web' | 'native';

export function checkApplicationType(value: unknown, redirectUris: readonly string[]): ApplicationType | undefined {
  if (value === undefined) return undefined;
  if (value !== 'web' && value !== 'native')
    throw invalidClientMetadata(`application_type must be "web" or "native", not ${clip(JSON.stringify(value) ?? typeof value)}`);
  for (const uri of redirectUris) {
    const parsed = new URL(uri);
    const scheme = parsed.protocol.slice(0, -1);
    const loopback = LOOPBACK.has(parsed.hostname) && (scheme === 'http' || scheme === 'https');
    if (value === 'web' && (scheme !== 'https' || loopback)) {
      throw invalidRedirectUri(
        `${clip(uri)}: a web application's redirect URIs are https on a host other than localhost; register a native application (application_type "native") for a loopback or app scheme`,
      );
    }
    if (value === 'native' && !loopback && (scheme === 'https' || scheme === 'http')) {
      throw invalidRedirectUri(
        `${clip(uri)}: a native application's redirect URIs are a loopback address (http://127.0.0.1:{port}/…) or its own scheme; register a web application (application_type "web") for an https site`,
      );
    }
  }
  return value;
}

// Whether `asked` is one of the registered redirect URIs: exactly, or for a loopback one with any port,
// since a native client listens on whichever port it gets (RFC 8252 7.3).
export function redirectUriRegistered(registered: readonly string[], asked: string): boolean {
  if (registered.includes(asked)) return true;
  if (!isLoopbackUri(asked)) return false;
  const withoutPort = (uri: string) => {
    const url = new URL(uri);
    url.port = '';
    return url.href;
  };
  const portless = withoutPort(asked);
  return registered.some((uri) => isLoopbackUri(uri) && withoutPort(uri) === portless);
}

// An http(s) URI of this machine's loopback interface: what a native client listens on (RFC 8252 7.3).
export function isLoopbackUri(uri: string): boolean {
  if (!URL.canParse(uri)) return false;
  const parsed = new URL(uri);
  return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && LOOPBACK.has(parsed.hostname);
}

// RFC 8252 7.1: com.example.app for app.example.com, or com.example.app.beta under it; a dotted name only
// (a single label is anyone's), never of an IP address.
function isReverseOf(scheme: string, host: string): boolean {
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0 || !scheme.includes('.')) return false;
  const reversed = reverseOf(host);
  return scheme === reversed || scheme.startsWith(`${reversed}.`);
}

const reverseOf = (host: string) => host.toLowerCase().split('.').reverse().join('.');

export function clientName(value: unknown, fallback: string): string {
  if (typeof value !== 'string') return fallback;
  // Shown to a person deciding: control and bidirectional characters could disguise it.
  const name = value.replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, '').trim();
  return name === '' ? fallback : name.slice(0, NAME_MAX);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const clip = (text: string) => (text.length > 100 ? `${text.slice(0, 100)}…` : text);
