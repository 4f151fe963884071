import { createHash } from 'node:crypto';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type { DetailedError, EntityJson, EntityUidJson, CedarValueJson } from '@cedar-policy/cedar-wasm/nodejs';
import { type DeterminingPolicy, type PolicyProblem } from './policy.errors.js';
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
}

// A tenant's and a project's policy sets as one, parsed once into Cedar's cache (by the hash of their
// texts, so instances and versions never clash) with what each policy is: its @id, effect and annotations.
export interface CompiledPolicySet {
  setId: string;
  policies: ReadonlyMap<string, PolicyMeta>;
}

const SCHEMA_NAME = 'toolgate';
// Policies restrict: a call no policy forbids is allowed, as it was before any policy was set.
const DEFAULT_PERMIT_KEY = 'toolgate.default';
const DEFAULT_PERMIT = 'permit (principal, action, resource);';
const ACTION: EntityUidJson = { type: 'Toolgate::Action', id: 'call' };

let schemaParsed = false;
function preparedSchema(): string {
  if (!schemaParsed) {
    const parsed = cedar.preparseSchema(SCHEMA_NAME, POLICY_SCHEMA);
    if (parsed.type !== 'success') throw new Error(`Toolgate's Cedar schema does not parse: ${parsed.errors.map((e) => e.message).join('; ')}`);
    schemaParsed = true;
  }
  return SCHEMA_NAME;
}

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
  if (twice !== undefined) return [{ message: `two policies have the @id "${twice}"`, help: 'give each policy its own @id', policyId: twice, position: null }];
  return null;
}

export function compilePolicySet(sets: ReadonlyArray<{ scope: PolicyScope; text: string }>): CompiledPolicySet {
  const staticPolicies: Record<string, string> = { [DEFAULT_PERMIT_KEY]: DEFAULT_PERMIT };
  const policies = new Map<string, PolicyMeta>();
  for (const { scope, text } of sets) {
    const parts = cedar.policySetTextToParts(text);
    // Stored sets were validated when set; one that no longer parses (a Cedar upgrade) forbids every call.
    if (parts.type !== 'success') throw new Error(`the ${scope} policy set no longer parses: ${parts.errors.map((e) => e.message).join('; ')}`);
    for (const [index, policy] of parts.policies.entries()) {
      const key = `${scope}.${index}`;
      staticPolicies[key] = policy;
      policies.set(key, metaOf(policy, index, scope));
    }
  }
  const setId = createHash('sha256').update(JSON.stringify(staticPolicies)).digest('hex');
  const parsed = cedar.preparsePolicySet(setId, { staticPolicies });
  if (parsed.type !== 'success') throw new Error(`the policy sets do not parse together: ${parsed.errors.map((e) => e.message).join('; ')}`);
  return { setId, policies };
}

// Forbid wins; a forbid that could not be evaluated forbids too (fail closed). An allow determined by a
// permit annotated @ask, or a deny whose forbids are all annotated @ask, asks a person.
export function decide(set: CompiledPolicySet, request: PolicyRequest): PolicyDecision {
  const answer = cedar.statefulIsAuthorized({
    principal: request.principal,
    action: ACTION,
    resource: request.resource,
    context: request.context,
    entities: request.entities,
    preparsedPolicySetId: set.setId,
    preparsedSchemaName: preparedSchema(),
    validateRequest: true,
  });
  if (answer.type !== 'success') {
    throw new Error(`the policy request was refused by Cedar: ${answer.errors.map((e) => e.message).join('; ')}`);
  }
  const { decision, diagnostics } = answer.response;
  const erroredForbids = diagnostics.errors.map((e) => set.policies.get(e.policyId)).filter((p): p is PolicyMeta => p?.effect === 'forbid');
  const reasons = diagnostics.reason.map((id) => set.policies.get(id)).filter((p): p is PolicyMeta => p !== undefined);
  if (erroredForbids.length > 0) return { effect: 'forbid', policies: [...reasons.filter((p) => p.effect === 'forbid'), ...erroredForbids].map(shown) };
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
