import { requestPath } from './request-path.js';

describe('requestPath', () => {
  it('ends the path where both routers end it: at ? or at a literal #, whichever comes first', () => {
    expect(requestPath('/v1/projects/p/mcp')).toBe('/v1/projects/p/mcp');
    expect(requestPath('/mcp?x=1#y')).toBe('/mcp');
    expect(requestPath('/v1/projects/p#/mcp?x=1')).toBe('/v1/projects/p');
    expect(requestPath('/v1/projects/p?next=/mcp#z')).toBe('/v1/projects/p');
  });
});
