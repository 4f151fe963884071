import { createHash } from 'node:crypto';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type { DetailedError, EntityJson, EntityUidJson, CedarValueJson } from '@cedar-policy/cedar-wasm/nodejs';
import { type DeterminingPolicy, type PolicyProblem } from './policy.errors.js';
import { type PolicyReads, readsOfPolicy, unionOfReads } from './policy-reads.js';
import { POLICY_SCHEMA } from './policy-schema.js';

export type PolicyScope = 'tenant' | 'project';

// What the policies say of one call: allow, forbid (a forbid policy determined it) or ask (a determining
// policy is annotated @ask: the call waits for a person, as approvalRequired has it).
export interface PolicyDecision {
  effect: 'allow' | 'forbid' | 'ask';
  policies: DeterminingPolicy[];
}

export interface PolicyRequest {
  principal: EntityUidJson;
  resource: EntityUidJson;
  context: Record<string, CedarValueJson>;
  entities: EntityJson[];
}

interface PolicyMeta {
  id: string;
  scope: PolicyScope;
  effect: 'permit' | 'forbid';
  reason: string | null;
  ask: boolean;
  // What the policy's scope can match: a call outside it is never judged by the policy.
  principal: ScopeMatcher;
  resource: ScopeMatcher;
  // What it can read of the call: the attributes and tags it names, and whether it asks `in`.
  reads: PolicyReads;
}

// A scope constraint as Cedar reads it (uids as `type::"id"` keys): `principal`, `== E`, `in E` and
// `is T [in E]`. The action is not pruned on: the schema has one action and no action groups.
type ScopeMatcher = { op: 'any' } | { op: 'eq'; uid: string } | { op: 'in'; uid: string } | { op: 'is'; type: string; in: string | null };

// The scope of one call: the principal and the resource, each with itself and every ancestor (what `in`
// reaches). Built from the call without its context, so a call no policy can apply to costs no request.
export interface RequestScope {
  principal: EntityUidJson & { type: string; id: string };
  principalIn: ReadonlyArray<EntityUidJson & { type: string; id: string }>;
  resource: EntityUidJson & { type: string; id: string };
  resourceIn: ReadonlyArray<EntityUidJson & { type: string; id: string }>;
}

// A tenant's and a project's policy sets as one, parsed once into Cedar's cache (by the hash of their
// texts, so instances and versions never clash) with what each policy is: its @id, effect and annotations.
export interface CompiledPolicySet {
  setId: string;
  policies: ReadonlyMap<string, PolicyMeta>;
  // Each policy's place in the set, by its key.
  order: ReadonlyMap<string, number>;
  // Each policy's text by its key, for the subsets.
  texts: Readonly<Record<string, string>>;
  // The subsets of the set that apply to the scopes seen so far, each prepared once in Cedar (by the
  // policy keys it holds); dropped with the set on the next change.
  subsets: Map<string, string>;
  // The applicable policies' keys by call scope, with what they can read of the call.
  applicable: Map<string, Applicable>;
}

interface Applicable {
  keys: readonly string[];
  reads: PolicyReads;
}

// The scopes remembered per set; past this many the memory starts over (each is recomputed from the index).
const MAX_SCOPES = 4096;

// Past this many prepared subsets a set evaluates further scopes on the whole set (same decision).
const MAX_SUBSETS = 256;

// Policies restrict: a call no policy forbids is allowed, as it was before any policy was set.
const DEFAULT_PERMIT_KEY = 'toolgate.default';
const DEFAULT_PERMIT = 'permit (principal, action, resource);';
const ACTION: EntityUidJson = { type: 'Toolgate::Action', id: 'call' };

// Parses and validates a policy set against the schema (strict); null when it is valid, else Cedar's problems.
export function checkPolicyText(text: string): PolicyProblem[] | null {
  const parts = cedar.policySetTextToParts(text);
  if (parts.type !== 'success') return parts.errors.map((e) => problem(text, e, null));
  if (parts.policy_templates.length > 0) {
    return [{ message: 'policy templates are not supported; write static policies', help: null, policyId: null, position: null }];
  }
  const answer = cedar.validate({ schema: POLICY_SCHEMA, policies: { staticPolicies: text }, validationSettings: { mode: 'strict' } });
  if (answer.type !== 'success') return answer.errors.map((e) => problem(text, e, null));
  const ids = parts.policies.map((policy, index) => metaOf(policy, index, 'tenant').id);
  // Cedar names the policies of a text policy0, policy1, ... in order: told by their @id.
  const named = (cedarId: string) => ids[Number(/^policy(\d+)$/.exec(cedarId)?.[1] ?? NaN)] ?? cedarId;
  if (answer.validationErrors.length > 0) return answer.validationErrors.map((e) => problem(text, e.error, named(e.policyId)));
  const twice = ids.find((id, index) => ids.indexOf(id) !== index);
  if (twice !== undefined)
    return [{ message: `two policies have the @id "${twice}"`, help: 'give each policy its own @id', policyId: twice, position: null }];
  return null;
}

export function compilePolicySet(sets: ReadonlyArray<{ scope: PolicyScope; text: string }>): CompiledPolicySet {
  const staticPolicies: Record<string, string> = { [DEFAULT_PERMIT_KEY]: DEFAULT_PERMIT };
  const policies = new Map<string, PolicyMeta>();
  for (const { scope, text } of sets) {
    const parts = cedar.policySetTextToParts(text);
    // Stored sets were validated when set; one that no longer parses (a Cedar upgrade) forbids every call.
    if (parts.type !== 'success')
      throw new Error(`the ${scope} policy set no longer parses: ${parts.errors.map((e) => e.message).join('; ')}`);
    for (const [index, policy] of parts.policies.entries()) {
      const key = `${scope}.${index}`;
      staticPolicies[key] = policy;
      policies.set(key, metaOf(policy, index, scope));
    }
  }
  const setId = createHash('sha256').update(JSON.stringify(staticPolicies)).digest('hex');
  const parsed = cedar.preparsePolicySet(setId, { staticPolicies });
  if (parsed.type !== 'success')
    throw new Error(`the policy sets do not parse together: ${parsed.errors.map((e) => e.message).join('; ')}`);
  return {
    setId,
    policies,
    order: new Map([...policies.keys()].map((key, index) => [key, index])),
    texts: staticPolicies,
    subsets: new Map(),
    applicable: new Map(),
  };
}

// The policies whose scope can match the call, in the set's order: only these can be satisfied (Cedar
// satisfies a policy only when its scope matches), so only these are evaluated. A `when` or `unless`
// condition may read anything and is left to Cedar.
export function applicablePolicies(set: CompiledPolicySet, scope: RequestScope): readonly string[] {
  return applicableTo(set, scope).keys;
}

function applicableTo(set: CompiledPolicySet, scope: RequestScope): Applicable {
  // Calls of the same scope (key, role, tool, project, toolset) share the answer, kept until the next change.
  const signature = `${scope.principalIn.map(uidKey).join('\t')}\n${scope.resourceIn.map(uidKey).join('\t')}`;
  const known = set.applicable.get(signature);
  if (known !== undefined) return known;
  const keys = scopeMatches(set, scope);
  const applicable = { keys, reads: unionOfReads(keys.map((key) => set.policies.get(key)!.reads)) };
  if (set.applicable.size >= MAX_SCOPES) set.applicable.clear();
  set.applicable.set(signature, applicable);
  return applicable;
}

function scopeMatches(set: CompiledPolicySet, scope: RequestScope): string[] {
  const principalIn = new Set(scope.principalIn.map(uidKey));
  const resourceIn = new Set(scope.resourceIn.map(uidKey));
  const applicable: string[] = [];
  for (const [key, policy] of set.policies) {
    if (
      matches(policy.principal, scope.principal.type, uidKey(scope.principal), principalIn) &&
      matches(policy.resource, scope.resource.type, uidKey(scope.resource), resourceIn)
    )
      applicable.push(key);
  }
  return applicable;
}

// The scope of a built request: its principal and resource with their ancestors among its entities.
export function scopeOfRequest(request: PolicyRequest): RequestScope {
  const parents = new Map(request.entities.map((e) => [uidKey(e.uid as EntityUid), (e.parents ?? []) as EntityUid[]]));
  const closure = (uid: EntityUid): EntityUid[] => {
    const seen = new Map<string, EntityUid>([[uidKey(uid), uid]]);
    const queue = [uid];
    for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
      for (const parent of parents.get(uidKey(next)) ?? []) {
        if (!seen.has(uidKey(parent))) {
          seen.set(uidKey(parent), parent);
          queue.push(parent);
        }
      }
    }
    return [...seen.values()];
  };
  const principal = request.principal as EntityUid;
  const resource = request.resource as EntityUid;
  return { principal, principalIn: closure(principal), resource, resourceIn: closure(resource) };
}

type EntityUid = EntityUidJson & { type: string; id: string };
// Types never hold a NUL, so type and id joined by one name one entity.
const uidKey = (uid: { type: string; id: string }) => `${uid.type}\u0000${uid.id}`;

function matches(matcher: ScopeMatcher, type: string, uid: string, within: ReadonlySet<string>): boolean {
  switch (matcher.op) {
    case 'any':
      return true;
    case 'eq':
      return matcher.uid === uid;
    case 'in':
      return within.has(matcher.uid);
    case 'is':
      return matcher.type === type && (matcher.in === null || within.has(matcher.in));
  }
}

function matcherOf(constraint: unknown): ScopeMatcher {
  const c = constraint as
    | { op?: string; entity?: { type?: unknown; id?: unknown }; entity_type?: unknown; in?: { entity?: { type?: unknown; id?: unknown } } }
    | undefined;
  const uid = (e: { type?: unknown; id?: unknown } | undefined) =>
    e && typeof e.type === 'string' && typeof e.id === 'string' ? uidKey({ type: e.type, id: e.id }) : null;
  const entity = uid(c?.entity);
  if (c?.op === '==' && entity !== null) return { op: 'eq', uid: entity };
  if (c?.op === 'in' && entity !== null) return { op: 'in', uid: entity };
  if (c?.op === 'is' && typeof c.entity_type === 'string') {
    if (c.in === undefined) return { op: 'is', type: c.entity_type, in: null };
    const within = uid(c.in.entity);
    if (within !== null) return { op: 'is', type: c.entity_type, in: within };
  }
  // `All`, or anything not read here (a slot): the policy may apply to every call.
  return { op: 'any' };
}

// The Cedar id of the prepared set holding exactly these policies (and the default permit), prepared on
// first use. Named by the set's hash and the keys' hash, so two sets never share an id by mistake.
function preparedSubset(set: CompiledPolicySet, keys: readonly string[]): string {
  if (keys.length === set.policies.size) return set.setId;
  const signature = keys.join('\n');
  const known = set.subsets.get(signature);
  if (known !== undefined) return known;
  if (set.subsets.size >= MAX_SUBSETS) return set.setId;
  const staticPolicies: Record<string, string> = { [DEFAULT_PERMIT_KEY]: DEFAULT_PERMIT };
  for (const key of keys) staticPolicies[key] = set.texts[key];
  const id = `${set.setId}.${createHash('sha256').update(signature).digest('hex')}`;
  const parsed = cedar.preparsePolicySet(id, { staticPolicies });
  if (parsed.type !== 'success')
    throw new Error(`a subset of the policy set does not parse: ${parsed.errors.map((e) => e.message).join('; ')}`);
  set.subsets.set(signature, id);
  return id;
}

// The decision for a call given its scope: with no policy that can apply, what Cedar answers for the
// default permit alone (allow, no determining policy) without asking it; else Cedar's decision over
// only the policies that can apply. `build` makes the request only when Cedar is asked, holding at least
// what those policies can read.
export function decideScoped(set: CompiledPolicySet, scope: RequestScope, build: (reads: PolicyReads) => PolicyRequest): PolicyDecision {
  const { keys, reads } = applicableTo(set, scope);
  if (keys.length === 0) return { effect: 'allow', policies: [] };
  return evaluate(set, preparedSubset(set, keys), build(reads));
}

// Forbid wins; a forbid that could not be evaluated forbids too (fail closed). An allow determined by a
// permit annotated @ask, or a deny whose forbids are all annotated @ask, asks a person.
export function decide(set: CompiledPolicySet, request: PolicyRequest): PolicyDecision {
  return evaluate(set, set.setId, request);
}

// Cedar's evaluation of a request over a prepared set (the whole set or a subset of it). The request is read
// without the schema: Toolgate builds it to the schema with every value typed in its JSON (`__extn`,
// `__entity`), and the policies were validated against the schema when set; typing the entities by the
// schema on each call cost about a fifth of Cedar's time and changed no value.
function evaluate(set: CompiledPolicySet, preparedId: string, request: PolicyRequest): PolicyDecision {
  const answer = cedar.statefulIsAuthorized({
    principal: request.principal,
    action: ACTION,
    resource: request.resource,
    context: request.context,
    entities: request.entities,
    preparsedPolicySetId: preparedId,
    validateRequest: false,
  });
  if (answer.type !== 'success') {
    throw new Error(`the policy request was refused by Cedar: ${answer.errors.map((e) => e.message).join('; ')}`);
  }
  const { decision, diagnostics } = answer.response;
  // Cedar names the determining policies in no set order: they are told in the set's order (tenant's
  // first, each in its text's order), the same whichever policies were evaluated.
  const inOrder = (ids: string[]) => ids.filter((id) => set.policies.has(id)).sort((a, b) => set.order.get(a)! - set.order.get(b)!);
  const erroredForbids = inOrder(diagnostics.errors.map((e) => e.policyId))
    .map((id) => set.policies.get(id))
    .filter((p): p is PolicyMeta => p?.effect === 'forbid');
  const reasons = inOrder(diagnostics.reason)
    .map((id) => set.policies.get(id))
    .filter((p): p is PolicyMeta => p !== undefined);
  if (erroredForbids.length > 0)
    return { effect: 'forbid', policies: [...reasons.filter((p) => p.effect === 'forbid'), ...erroredForbids].map(shown) };
  if (decision === 'deny') {
    const forbids = reasons.filter((p) => p.effect === 'forbid');
    const hard = forbids.filter((p) => !p.ask);
    return hard.length > 0 ? { effect: 'forbid', policies: hard.map(shown) } : { effect: 'ask', policies: forbids.map(shown) };
  }
  const asking = reasons.filter((p) => p.ask);
  return asking.length > 0 ? { effect: 'ask', policies: asking.map(shown) } : { effect: 'allow', policies: reasons.map(shown) };
}

const shown = (p: PolicyMeta): DeterminingPolicy => ({ id: p.id, scope: p.scope, reason: p.reason });

function metaOf(policy: string, index: number, scope: PolicyScope): PolicyMeta {
  const json = cedar.policyToJson(policy);
  if (json.type !== 'success') throw new Error(`a policy does not convert: ${json.errors.map((e) => e.message).join('; ')}`);
  const annotations = json.json.annotations ?? {};
  return {
    id: annotations.id ?? `policy${index}`,
    scope,
    effect: json.json.effect,
    reason: annotations.reason ?? null,
    ask: annotations.ask !== undefined,
    principal: matcherOf(json.json.principal),
    resource: matcherOf(json.json.resource),
    reads: readsOfPolicy(json.json),
  };
}

function problem(text: string, error: DetailedError, policyId: string | null): PolicyProblem {
  const location = error.sourceLocations?.[0];
  let position: PolicyProblem['position'] = null;
  if (location) {
    const before = text.slice(0, location.start).split('\n');
    position = { start: location.start, end: location.end, line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
  }
  const label = location && 'label' in location && location.label ? ` (${location.label})` : '';
  return { message: `${error.message}${label}`, help: error.help, policyId, position };
}
