import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

// A certificate for localhost and 127.0.0.1 that the tests trust (OAUTH_CLIENT_METADATA_CA_FILE names it).
export const LOCALHOST_CERT_FILE = new URL('./fixtures/localhost.cert.pem', import.meta.url).pathname;
const LOCALHOST_KEY = readFileSync(new URL('./fixtures/localhost.key.pem', import.meta.url));

export interface DocumentServer {
  origin: string;
  hostPort: string;
  // path -> how to answer it
  routes: Map<string, (res: http.ServerResponse) => void>;
  close(): Promise<void>;
}

// A real HTTPS server on 127.0.0.1 serving client ID metadata documents.
export async function startDocumentServer(): Promise<DocumentServer> {
  const routes = new Map<string, (res: http.ServerResponse) => void>();
  const server = https.createServer({ key: LOCALHOST_KEY, cert: readFileSync(LOCALHOST_CERT_FILE) }, (req, res) => {
    const route = routes.get(req.url ?? '');
    if (route) return route(res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    routes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const serveJson = (body: unknown) => (res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

export interface CallbackServer {
  url: string;
  // Resolves with the query of the next request the browser makes to the callback.
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}

// The client's loopback redirect URI (RFC 8252): what the browser is sent back to.
export async function startCallbackServer(): Promise<CallbackServer> {
  let waiting: ((query: URLSearchParams) => void) | undefined;
  const arrived: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    // A browser also asks for /favicon.ico.
    if (url.pathname !== '/callback') return void res.writeHead(404).end();
    const query = url.searchParams;
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p>You can close this window.</p>');
    if (waiting) {
      waiting(query);
      waiting = undefined;
    } else arrived.push(query);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () => {
      const first = arrived.shift();
      return first ? Promise.resolve(first) : new Promise((resolve) => (waiting = resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// What an MCP client keeps between runs, as the SDK's auth() asks it: a plain in-memory store.
export class MemoryOAuthProvider implements OAuthClientProvider {
  authorizationUrl?: URL;
  private client?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier = '';

  constructor(
    private readonly redirect: string,
    readonly clientMetadataUrl?: string,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test MCP client',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return 'state-123';
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }
}
