import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { schemaIssue } from './schema-issue.js';

describe('schemaIssue', () => {
  it('turns the ZodError of an answer the SDK refused into its first issue, in one line', () => {
    const refused = CallToolResultSchema.safeParse({ content: 'not a list' });
    expect(refused.success).toBe(false);
    const line = schemaIssue(refused.error);
    expect(line).toMatch(/^its answer is not a valid MCP message at content: /);
    expect(line).not.toContain('\n');
  });

  it('leaves other errors to their own message', () => {
    expect(schemaIssue(new Error('connect ECONNREFUSED'))).toBeNull();
    expect(schemaIssue('a string')).toBeNull();
  });
});
