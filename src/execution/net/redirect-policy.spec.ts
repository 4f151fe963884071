import { AppError } from '../../common/errors/app-error.js';
import { nextHop, type HopRequest } from './redirect-policy.js';

const post = (url = 'http://a.example/form'): HopRequest => ({
  url: new URL(url),
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: 'Bearer t', cookie: 'c=1', 'x-trace': '7' },
  body: '{"a":1}',
});

describe('nextHop', () => {
  it('is undefined for a final response, a 3xx that is not a redirect, or no Location', () => {
    expect(nextHop(post(), 200, '/x')).toBeUndefined();
    expect(nextHop(post(), 304, '/x')).toBeUndefined();
    expect(nextHop(post(), 300, '/x')).toBeUndefined();
    expect(nextHop(post(), 302, undefined)).toBeUndefined();
  });

  it('resolves a relative Location against the current URL', () => {
    expect(nextHop(post('http://a.example/a/b?q'), 307, '../c')?.url.href).toBe('http://a.example/c');
  });

  it('turns a 303 into a GET without body or content headers', () => {
    const next = nextHop(post(), 303, '/done');
    expect(next).toMatchObject({ method: 'GET', body: undefined });
    expect(next?.headers).not.toHaveProperty('content-type');
    expect(next?.headers).toMatchObject({ 'x-trace': '7' });
  });

  it('keeps HEAD a HEAD across a 303', () => {
    expect(nextHop({ ...post(), method: 'HEAD', body: undefined }, 303, '/x')?.method).toBe('HEAD');
  });

  it.each([301, 302])('turns a POST answered with %i into a GET', (status) => {
    expect(nextHop(post(), status, '/x')).toMatchObject({ method: 'GET', body: undefined });
  });

  it.each([301, 302])('keeps PUT and its body across a %i', (status) => {
    expect(nextHop({ ...post(), method: 'PUT' }, status, '/x')).toMatchObject({ method: 'PUT', body: '{"a":1}' });
  });

  it.each([307, 308])('keeps the method and body across a %i', (status) => {
    expect(nextHop(post(), status, '/x')).toMatchObject({ method: 'POST', body: '{"a":1}' });
  });

  it('drops credentials when the redirect leaves the origin, and keeps them when it does not', () => {
    expect(nextHop(post(), 307, 'http://b.example/')?.headers).not.toHaveProperty('authorization');
    expect(nextHop(post(), 307, 'http://b.example/')?.headers).not.toHaveProperty('cookie');
    expect(nextHop(post(), 307, '/same')?.headers).toMatchObject({ authorization: 'Bearer t', cookie: 'c=1' });
  });

  it('[sec-23] refuses an https -> http downgrade', () => {
    let thrown: unknown;
    try {
      nextHop({ ...post('https://a.example/'), method: 'GET', body: undefined }, 302, 'http://a.example/');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ status: 403, code: 'url_blocked', details: { url: 'http://a.example/' } });
    expect((thrown as AppError).message).toMatch(/downgrades https to http/);
  });

  it('allows http -> https', () => {
    expect(nextHop(post(), 308, 'https://a.example/')?.url.protocol).toBe('https:');
  });

  it('treats a Location that does not parse as no redirect', () => {
    expect(nextHop(post(), 302, 'http://[::1')).toBeUndefined();
  });
});
