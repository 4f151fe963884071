import http from 'node:http';
import type { AddressInfo } from 'node:net';

// Small pieces the tests of connections share: local servers, request bodies, and a person's browser going
// through an authorization server's sign-in and consent forms (oidc-provider's dev interactions).

export const listen = async (server: http.Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

export const freePort = async (): Promise<number> => {
  const probe = http.createServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
};

export const closeServer = async (server: http.Server | undefined): Promise<void> => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
};

export const readJsonBody = async (req: http.IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
};

// Signs `login` in at the authorization server and consents, following redirects up to Toolgate's callback
// (`appBase`), which must answer that the account is connected.
export async function connectInBrowser(authorizationUrl: string, login: string, appBase: string): Promise<void> {
  const jar = new Map<string, string>();
  let url = new URL(authorizationUrl);
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form && { body: form.toString() }),
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    form = undefined;
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url);
      if (url.href.startsWith(`${appBase}/v1/connections/callback`)) {
        const done = await fetch(url);
        const text = await done.text();
        if (done.status !== 200 || !text.includes('account is connected'))
          throw new Error(`the callback answered ${done.status}: ${text.slice(0, 300)}`);
        return;
      }
      continue;
    }
    const page = await res.text();
    if (res.status !== 200) throw new Error(`${url.href} answered ${res.status}: ${page.slice(0, 300)}`);
    if (page.includes('name="login"')) form = new URLSearchParams({ prompt: 'login', login, password: 'any' });
    else if (page.includes('value="consent"')) form = new URLSearchParams({ prompt: 'consent' });
    else throw new Error(`unexpected page at ${url.href}: ${page.slice(0, 300)}`);
  }
  throw new Error('too many steps');
}
