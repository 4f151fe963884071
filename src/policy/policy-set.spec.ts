import { checkPolicyText, compilePolicySet, decide, type PolicyRequest } from './policy-set.js';

const request = (tool: string, context: PolicyRequest['context'] = {}, role = 'agent'): PolicyRequest => ({
  principal: { type: 'Toolgate::Key', id: 'k' },
  resource: { type: 'Toolgate::Tool', id: tool },
  context: {
    arguments: { __entity: { type: 'Toolgate::Arguments', id: 'call' } },
    channel: 'rest',
    time: { __extn: { fn: 'datetime', arg: '2026-12-01T00:00:00Z' } },
    paths: [],
    argv: [],
    ...context,
  },
  entities: [
    { uid: { type: 'Toolgate::Key', id: 'k' }, attrs: { name: 'bot', role }, parents: [{ type: 'Toolgate::Role', id: role }] },
    { uid: { type: 'Toolgate::Tool', id: tool }, attrs: { name: tool, classes: [], source: 'builtin', exposedName: tool }, parents: [] },
    { uid: { type: 'Toolgate::Arguments', id: 'call' }, attrs: {}, parents: [], tags: {} },
  ],
});

describe('policy sets', () => {
  it('refuses a set that does not validate, naming the policy by its @id and the position', () => {
    const problems = checkPolicyText(
      'permit (principal, action, resource);\n@id("typo") forbid (principal, action, resource) when { resource.nme == "x" };',
    );
    expect(problems?.[0]).toMatchObject({ policyId: 'typo', help: expect.stringContaining('name'), position: { line: 2 } });
    expect(
      checkPolicyText('@id("a") permit (principal, action, resource);\n@id("a") forbid (principal, action, resource);')?.[0].message,
    ).toContain('"a"');
    expect(checkPolicyText('forbid (principal, action, resource) when { context has path && context.path like "docs/*" };')).toBeNull();
  });

  it('lets forbid win, asks for an @ask permit, and allows what nothing forbids', () => {
    const set = compilePolicySet([
      { scope: 'tenant', text: '@id("no-fetch") @reason("offline") forbid (principal, action, resource == Toolgate::Tool::"fetch_url");' },
      {
        scope: 'project',
        text: '@id("ask-deletes") @ask("") permit (principal, action, resource == Toolgate::Tool::"delete_file");\n@id("no-agent-deletes") forbid (principal in Toolgate::Role::"agent", action, resource == Toolgate::Tool::"delete_file");',
      },
    ]);
    expect(decide(set, request('fetch_url'))).toEqual({
      effect: 'forbid',
      policies: [{ id: 'no-fetch', scope: 'tenant', reason: 'offline' }],
    });
    expect(decide(set, request('delete_file', {}, 'admin'))).toEqual({
      effect: 'ask',
      policies: [{ id: 'ask-deletes', scope: 'project', reason: null }],
    });
    expect(decide(set, request('delete_file', {}, 'agent')).effect).toBe('forbid');
    expect(decide(set, request('read_file'))).toEqual({ effect: 'allow', policies: [] });
  });

  it('asks when every determining forbid carries @ask', () => {
    const set = compilePolicySet([
      {
        scope: 'project',
        text: '@id("push") @ask("") forbid (principal, action, resource) when { context has command && context.command like "git push*" };',
      },
    ]);
    expect(decide(set, request('shell_exec', { command: 'git push origin', argv: ['git', 'push', 'origin'] })).effect).toBe('ask');
    expect(decide(set, request('shell_exec', { command: 'git status', argv: ['git', 'status'] })).effect).toBe('allow');
  });
});
