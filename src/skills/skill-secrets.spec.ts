import { randomBytes } from 'node:crypto';
import { isSealed, SecretBox } from '../common/secrets/secret-box.js';
import { executorSecrets, maskExecutorSecrets, openExecutorSecrets, sealExecutorSecrets } from './skill-secrets.js';

describe('skill secrets', () => {
  const box = new SecretBox(randomBytes(32));
  const tools = [
    {
      name: 'up',
      executor: {
        type: 'mcp',
        url: 'https://mcp.test/mcp?api_key=k-123456&team=a',
        headers: { Authorization: 'Bearer t-123456' },
        tool: 'up',
      },
    },
    { name: 'post', executor: { type: 'http', url: 'https://hooks.test/in' } },
    { name: 'run', executor: { type: 'command', argv: ['echo', '{{text}}'] } },
  ];

  it('seals the URLs and header values of http and mcp executors, and opens them back', () => {
    const sealed = sealExecutorSecrets(tools, box);
    expect(isSealed(sealed[0].executor.url!)).toBe(true);
    expect(isSealed(sealed[0].executor.headers!.Authorization)).toBe(true);
    expect(isSealed(sealed[1].executor.url!)).toBe(true);
    expect(sealed[2]).toBe(tools[2]);
    expect(JSON.stringify(sealed)).not.toContain('k-123456');
    expect(openExecutorSecrets(sealed, box)).toEqual(tools);
    // Rows stored before URLs were sealed open as they are.
    expect(openExecutorSecrets(tools, box)).toEqual(tools);
  });

  it('shows header values and credential query values masked, the rest of the URL as it is', () => {
    const masked = maskExecutorSecrets(tools);
    expect(masked[0].executor).toEqual({
      type: 'mcp',
      url: 'https://mcp.test/mcp?api_key=[stored encrypted]&team=a',
      headers: { Authorization: '[stored encrypted]' },
      tool: 'up',
    });
    expect(masked[1].executor).toEqual({ type: 'http', url: 'https://hooks.test/in' });
  });

  it("names what an executor's messages must never quote: credential headers, a Bearer token alone, URL credentials", () => {
    expect(executorSecrets(tools[0].executor)).toEqual(['k-123456', 'Bearer t-123456', 't-123456']);
    expect(executorSecrets(tools[1].executor)).toEqual([]);
    // An ordinary header is not one, unless its value is shaped like a token.
    const headers = { Accept: 'application/json', 'X-Team': 'engineering', 'X-Acme': 'a1b2c3d4e5f6g7h8i9' };
    expect(executorSecrets({ url: 'https://x.test/', headers })).toEqual(['a1b2c3d4e5f6g7h8i9']);
  });
});
