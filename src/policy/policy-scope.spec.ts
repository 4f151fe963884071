import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type { ToolExecutor } from '../execution/tool-definition.js';
import { type PolicyCall, policyRequest, scopeOfCall } from './policy-request.js';
import { POLICY_SCHEMA } from './policy-schema.js';
import { applicablePolicies, compilePolicySet, decide, decideScoped, scopeOfRequest } from './policy-set.js';

// A small deterministic generator (mulberry32), so a failure names a reproducible seed.
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
}

const KEYS = ['k1', 'k2', 'k3'];
const ROLES = ['agent', 'admin', 'approver'];
const TOOLS = ['read_file', 'write_file', 'fetch_url', 'shell_exec', 'delete_file'];
const PROJECTS = ['p1', 'p2'];
const TOOLSETS = ['ts1', 'ts2'];

const PRINCIPALS = [
  'principal',
  'principal',
  'principal == Toolgate::Key::"k1"',
  'principal in Toolgate::Role::"agent"',
  'principal in Toolgate::Role::"admin"',
  'principal is Toolgate::Key in Toolgate::Role::"approver"',
  'principal is Toolgate::Key',
  'principal in Toolgate::Key::"k2"',
];
const RESOURCES = [
  'resource',
  'resource',
  ...TOOLS.map((t) => `resource == Toolgate::Tool::"${t}"`),
  'resource in Toolgate::Project::"p1"',
  'resource in Toolgate::Project::"p3"',
  'resource in Toolgate::Toolset::"ts1"',
  'resource is Toolgate::Tool in Toolgate::Project::"p2"',
  'resource in Toolgate::Tool::"fetch_url"',
  'resource is Toolgate::Tool',
];
const CONDITIONS = [
  '',
  'when { context.channel == "rest" }',
  'when { resource.name == "write_file" }',
  'when { context has path && context.path like "docs/*" }',
  'unless { context has host && context.host == "example.com" }',
  // Errors when the tag is absent: an errored forbid forbids.
  'when { context.arguments.getTag("branch") == "main" }',
  'when { principal.role == "agent" }',
  'when { principal in Toolgate::Role::"admin" }',
  // Reads that a pruned request must still carry: whole context, time, sets, hierarchy, other entities.
  // Equal only when the call names no path, host or command: a request missing those would be judged wrong.
  'when { context == { arguments: context.arguments, channel: context.channel, time: context.time, paths: context.paths, argv: context.argv } }',
  'when { context.time > datetime("2026-11-30") }',
  'when { context.paths.contains("docs/a.md") }',
  'when { context.argv.contains("push") || context has program && context.program == "git" }',
  'when { resource.classes.contains("@network") }',
  'when { resource has toolset && resource.exposedName like "x_*" }',
  'unless { principal has oauthClient }',
  'when { resource in Toolgate::Project::"p1" }',
  'when { resource in Toolgate::Toolset::"ts1" && Toolgate::Toolset::"ts1" in Toolgate::Project::"p2" }',
  'when { Toolgate::Tool::"write_file".name == "write_file" }',
  'when { (if context.channel == "rest" then principal else principal).name == "bot" }',
];

function policySet(pick: ReturnType<typeof generator>, count: number, prefix: string, resources = RESOURCES): string {
  const policies: string[] = [];
  for (let i = 0; i < count; i++) {
    const effect = pick(['permit', 'permit', 'forbid']);
    const annotations = `@id("${prefix}-${i}")${pick(['', '', ' @ask("")'])}${pick(['', ' @reason("why")'])}`;
    policies.push(`${annotations} ${effect} (${pick(PRINCIPALS)}, action, ${pick(resources)}) ${pick(CONDITIONS)};`);
  }
  return policies.join('\n');
}

const executor = (name: string) =>
  ({ definition: { name, source: 'builtin', description: '', inputSchema: { type: 'object' } } }) as unknown as ToolExecutor;

describe('the scope index of a policy set', () => {
  let workspace: string;

  beforeAll(async () => {
    workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'policy-scope-')));
    await mkdir(path.join(workspace, 'docs'));
  });
  afterAll(() => rm(workspace, { recursive: true, force: true }));

  function randomCall(pick: ReturnType<typeof generator>): PolicyCall {
    const tool = pick(TOOLS);
    const args: Record<string, unknown> = {};
    if (tool === 'fetch_url') args.url = pick(['https://example.com/a', 'https://other.example/b']);
    else if (tool === 'shell_exec')
      args.argv = pick([
        ['git', 'status'],
        ['git', 'push', 'origin'],
      ]);
    else args.path = pick(['docs/a.md', 'src/b.ts']);
    if (pick([false, true])) args.branch = pick(['main', 'dev']);
    const role = pick(ROLES);
    return {
      projectId: pick(PROJECTS),
      principal: { keyId: pick(KEYS), keyName: 'bot', role, oauthClient: pick([null, null, 'client-a']) },
      executor: executor(tool),
      exposed: pick([null, null, { toolset: pick(TOOLSETS), name: `x_${tool}` }]),
      args,
      channel: pick(['rest', 'mcp']),
      workspace,
      pathPrefix: null,
      now: new Date('2026-12-01T12:00:00Z'),
    };
  }

  it('decides every call as the whole set does on the whole request: the same effect and the same determining policies', () => {
    let set = compilePolicySet([]);
    const pick = generator(45);
    const seen = { skipped: 0, pruned: 0, whole: 0, left: 0, effects: new Set<string>() };
    // A sparse set of scope-constrained policies (calls that none applies to), then sets of one policy a side
    // (new ones every ten calls: a request pruned to one policy's reads leaves out the most), then a dense one.
    const constrained = RESOURCES.filter((r) => r.includes('==') || r.includes(' in '));
    for (let i = 0; i < 800; i++) {
      const size = i < 200 ? 3 : i < 500 ? 1 : 30;
      if (i === 0 || (i >= 200 && i <= 500 && i % 10 === 0)) {
        set = compilePolicySet([
          { scope: 'tenant', text: policySet(pick, size, 't', size === 3 ? constrained : RESOURCES) },
          { scope: 'project', text: policySet(pick, size, 'p', size === 3 ? constrained : RESOURCES) },
        ]);
      }
      const call = randomCall(pick);
      // The whole request, which Cedar reads without the schema, has the schema's types already.
      const request = policyRequest(call);
      if (i % 10 === 0) {
        expect(cedar.checkParseEntities({ entities: request.entities, schema: POLICY_SCHEMA })).toEqual({ type: 'success' });
        expect(
          cedar.checkParseContext({ context: request.context, schema: POLICY_SCHEMA, action: { type: 'Toolgate::Action', id: 'call' } }),
        ).toEqual({
          type: 'success',
        });
      }
      const scope = scopeOfCall(call);
      // The scope read off the call is the one Cedar sees in the built request.
      const keys = (uids: ReadonlyArray<{ type: string; id: string }>) => uids.map((u) => `${u.type}:${u.id}`).sort();
      const built = scopeOfRequest(request);
      expect([scope.principal, keys(scope.principalIn), scope.resource, keys(scope.resourceIn)]).toEqual([
        built.principal,
        keys(built.principalIn),
        built.resource,
        keys(built.resourceIn),
      ]);

      const applicable = applicablePolicies(set, scope).length;
      if (applicable === 0) seen.skipped++;
      else if (applicable < set.policies.size) seen.pruned++;
      else seen.whole++;
      const whole = decide(set, request);
      seen.effects.add(whole.effect);
      // Only the applicable policies, on a request holding only what they can read.
      let values = 0;
      const fast = decideScoped(set, scope, (reads) => {
        const pruned = policyRequest(call, reads);
        values += Object.keys(pruned.context).length + pruned.entities.length;
        return pruned;
      });
      seen.left += Object.keys(request.context).length + request.entities.length - values;
      expect({ call: i, ...fast }).toEqual({ call: i, ...whole });
    }
    // The comparison covered the pruned path and every effect (a generator that never pruned would prove nothing).
    expect(seen.skipped).toBeGreaterThan(20);
    expect(seen.pruned).toBeGreaterThan(100);
    expect([...seen.effects].sort()).toEqual(['allow', 'ask', 'forbid']);
    expect(seen.left).toBeGreaterThan(600);
  });

  it('skips Cedar when no policy can apply, answering what Cedar answers with no applicable policy', () => {
    const set = compilePolicySet([
      {
        scope: 'tenant',
        text: '@id("w") forbid (principal, action, resource == Toolgate::Tool::"write_file");\n@id("other") forbid (principal, action, resource in Toolgate::Project::"p2");',
      },
      { scope: 'project', text: '@id("admins") @ask("") permit (principal in Toolgate::Role::"admin", action, resource);' },
    ]);
    const call: PolicyCall = {
      ...randomCall(generator(1)),
      projectId: 'p1',
      executor: executor('read_file'),
      exposed: null,
      principal: { keyId: 'k1', keyName: 'bot', role: 'agent', oauthClient: null },
      args: { path: 'docs/a.md' },
    };
    expect(applicablePolicies(set, scopeOfCall(call))).toEqual([]);
    let built = 0;
    const fast = decideScoped(set, scopeOfCall(call), () => {
      built++;
      return policyRequest(call);
    });
    expect(built).toBe(0);
    expect(fast).toEqual({ effect: 'allow', policies: [] });
    expect(decide(set, policyRequest(call))).toEqual(fast);
    // The same call in p2, or by an admin, is judged by Cedar.
    expect(
      decideScoped(set, scopeOfCall({ ...call, projectId: 'p2' }), (reads) =>
        policyRequest({ ...call, projectId: 'p2' }, reads),
      ).policies.map((p) => p.id),
    ).toEqual(['other']);
    const admin = { ...call, principal: { ...call.principal, role: 'admin' } };
    expect(decideScoped(set, scopeOfCall(admin), (reads) => policyRequest(admin, reads))).toEqual({
      effect: 'ask',
      policies: [{ id: 'admins', scope: 'project', reason: null }],
    });
  });
});
