import { AppError } from '../../common/errors/app-error.js';
import { discoveredSlug } from '../../connections/mcp-auth-discovery.js';
import { ToolError } from '../../execution/tool-error.js';
import { connectionUser, executorAuthOf, withBearer, withSourceToken } from './mcp-source-auth.js';

describe('MCP source auth', () => {
  it('names the discovered provider by the server URL, the same for the same server and another for another', () => {
    const url = 'https://mcp.example.com/mcp';
    expect(executorAuthOf({ url, auth: { discover: true, as: 'user' } })).toEqual({ provider: discoveredSlug(url), as: 'user' });
    expect(discoveredSlug(url)).toMatch(/^mcp-[0-9a-f]{16}$/);
    expect(discoveredSlug(`${url}#fragment`)).toBe(discoveredSlug(url));
    expect(discoveredSlug('https://other.example.com/mcp')).not.toBe(discoveredSlug(url));
    expect(executorAuthOf({ url, auth: { provider: 'acme' } })).toEqual({ provider: 'acme' });
    expect(executorAuthOf({ url })).toBeUndefined();
  });

  it('replaces an Authorization header the admin wrote, in any case, and keeps the others', () => {
    expect(withBearer({ authorization: 'Bearer static', 'X-Team': 'a' }, 'tok')).toEqual({ 'X-Team': 'a', Authorization: 'Bearer tok' });
    expect(withBearer(undefined, 'tok')).toEqual({ Authorization: 'Bearer tok' });
  });

  it('uses the tenant’s connection for as: tenant, and refuses a user call that names nobody', () => {
    expect(connectionUser({ provider: 'acme', as: 'tenant' }, 'alice')).toBeNull();
    expect(connectionUser({ provider: 'acme' }, 'alice')).toBe('alice');
    expect(() => connectionUser({ provider: 'acme', as: 'user' }, null)).toThrow(AppError);
  });

  it('tries once more with a newer token after a 401, and no more', async () => {
    const asked: Array<string | undefined> = [];
    const token = (stale?: string) => {
      asked.push(stale);
      return Promise.resolve(stale === undefined ? 'first' : 'second');
    };
    const sent: string[] = [];
    const refused = () => Promise.reject(new ToolError('upstream_unauthorized', 'refused', false));
    await expect(withSourceToken(token, refused, sent)).rejects.toMatchObject({ code: 'upstream_unauthorized' });
    expect([asked, sent]).toEqual([
      [undefined, 'first'],
      ['first', 'second'],
    ]);

    const other: string[] = [];
    await expect(withSourceToken(token, () => Promise.reject(new ToolError('upstream_error', 'no', false)), other)).rejects.toMatchObject({
      code: 'upstream_error',
    });
    expect(other).toEqual(['first']);
    expect(await withSourceToken(token, (t) => Promise.resolve(`ran with ${t}`), [])).toBe('ran with first');
  });
});
