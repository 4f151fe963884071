import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { type PolicyReads, readsOfPolicy, unionOfReads } from './policy-reads.js';

const readsOf = (text: string): PolicyReads => {
  const json = cedar.policyToJson(text);
  if (json.type !== 'success') throw new Error(json.errors.map((e) => e.message).join('; '));
  return readsOfPolicy(json.json);
};
const shown = (r: PolicyReads) => ({
  ...r,
  context: r.context === 'all' ? 'all' : [...r.context].sort(),
  principal: r.principal === 'all' ? 'all' : [...r.principal].sort(),
  resource: r.resource === 'all' ? 'all' : [...r.resource].sort(),
  other: r.other === 'all' ? 'all' : [...r.other].sort(),
});

describe('what a policy can read of a call', () => {
  it('names the attributes, tags and parents a policy reads, and nothing else', () => {
    expect(
      shown(
        readsOf(
          'forbid (principal, action, resource) when { context has path.x && context.path like "a*" && principal.role == "agent" && context.arguments.getTag("b") == resource.name };',
        ),
      ),
    ).toEqual({
      context: ['arguments', 'path'],
      principal: ['role'],
      resource: ['name'],
      other: ['x'],
      tags: true,
      hierarchy: { principal: false, resource: false },
    });
    expect(shown(readsOf('permit (principal in Toolgate::Role::"agent", action in [Toolgate::Action::"call"], resource);'))).toEqual({
      context: [],
      principal: [],
      resource: [],
      other: [],
      tags: false,
      hierarchy: { principal: true, resource: false },
    });
    expect(readsOf('permit (principal, action, resource is Toolgate::Tool in Toolgate::Project::"p");').hierarchy).toEqual({
      principal: false,
      resource: true,
    });
    expect(readsOf('permit (principal is Toolgate::Key in Toolgate::Role::"approver", action, resource);').hierarchy).toEqual({
      principal: true,
      resource: false,
    });
    expect(readsOf('permit (principal is Toolgate::Key, action, resource) when { context.arguments in resource };').hierarchy).toEqual({
      principal: true,
      resource: true,
    });
  });

  it('reads the whole context when a policy uses it as a value', () => {
    expect(readsOf('forbid (principal, action, resource) when { [context].contains({ channel: "rest" }) };').context).toBe('all');
    expect(
      unionOfReads([
        readsOf('forbid (principal, action, resource) when { context.channel == "rest" };'),
        readsOf('forbid (principal, action, resource) when { context == {} };'),
      ]).context,
    ).toBe('all');
  });

  it('takes an attribute of any other entity as possibly the principal or the resource', () => {
    const reads = readsOf(
      'forbid (principal, action, resource) when { Toolgate::Tool::"x".source == "mcp" && (if true then principal else principal).name == "k" };',
    );
    expect(shown(reads).other).toEqual(['name', 'source']);
  });
});
