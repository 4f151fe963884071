import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderClient, SCOPE_MAX_CHARS, TOKEN_MAX_CHARS } from './provider-client.js';

// A provider is the tenant's choice and may answer up to a megabyte: what a connection keeps of its tokens
// is bounded before anything is stored. The code exchange and the refresh both answer through the same
// check (`issued`); a refresh, which needs no browser, drives it here.
describe('ProviderClient: tokens a connection keeps', () => {
  let server: Server;
  let issuer: string;
  let answer: Record<string, unknown>;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const refresh = () =>
    new ProviderClient([new URL(issuer).host]).refresh(
      {
        metadata: { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token` },
        clientId: 'toolgate',
        clientSecret: '',
      },
      'the-refresh-token',
    );

  it('keeps tokens and scopes of ordinary sizes', async () => {
    answer = { access_token: 'a'.repeat(TOKEN_MAX_CHARS), token_type: 'Bearer', expires_in: 60, scope: 'api:read api:write' };
    const tokens = await refresh();
    expect(tokens.accessToken).toHaveLength(TOKEN_MAX_CHARS);
    expect(tokens.refreshToken).toBe('the-refresh-token');
    expect(tokens.scopes).toEqual(['api:read', 'api:write']);
  });

  it.each([
    ['access_token', { access_token: 'a'.repeat(TOKEN_MAX_CHARS + 1) }, TOKEN_MAX_CHARS + 1, TOKEN_MAX_CHARS],
    ['refresh_token', { access_token: 'a', refresh_token: 'r'.repeat(1024 * 1024 - 100) }, 1024 * 1024 - 100, TOKEN_MAX_CHARS],
    ['scope', { access_token: 'a', scope: 's'.repeat(SCOPE_MAX_CHARS + 1) }, SCOPE_MAX_CHARS + 1, SCOPE_MAX_CHARS],
  ])('refuses a provider whose %s is past what a connection keeps', async (name, fields, length, max) => {
    answer = { token_type: 'Bearer', expires_in: 60, ...fields };
    await expect(refresh()).rejects.toThrow(`the provider's ${name} is ${length} characters, more than the ${max} a connection keeps`);
  });
});
