import { capArguments, capPaths } from './audit.service.js';

describe('what an audit row keeps of large values', () => {
  it('keeps redacted paths whole when they fit, as JSON text', () => {
    expect(capPaths(['/token', '/headers/authorization'], 256)).toBe('["/token","/headers/authorization"]');
  });

  it('cuts each path to 2,048 characters and the list to the cap, saying how many more there were', () => {
    const long = `/token${'~1'.repeat(1_000_000)}`;
    const one = JSON.parse(capPaths([long], 8192)) as string[];
    expect(one).toHaveLength(1);
    expect(one[0]).toHaveLength(2049);
    expect(one[0].endsWith('…')).toBe(true);

    const many = Array.from({ length: 5000 }, (_, i) => `/items/${i}/secret`);
    const text = capPaths(many, 1024);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024);
    const kept = JSON.parse(text) as string[];
    expect(kept.slice(0, 3)).toEqual(['/items/0/secret', '/items/1/secret', '/items/2/secret']);
    expect(kept.at(-1)).toBe(`… and ${5000 - (kept.length - 1)} more`);
  });

  it('answers only the closing entry when not even one path fits', () => {
    expect(JSON.parse(capPaths([`/${'x'.repeat(2000)}`], 256))).toEqual(['… and 1 more']);
  });

  it('keeps arguments under the cap as their JSON, over it as a preview', () => {
    expect(capArguments({ path: 'a' }, 256)).toEqual({ json: '{"path":"a"}', truncated: false });
    const big = capArguments({ text: 'x'.repeat(10_000) }, 256);
    expect(big.truncated).toBe(true);
    expect(Buffer.byteLength(big.json!)).toBeLessThan(400);
  });
});
