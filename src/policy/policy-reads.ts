// What a group of policies can read of a call. Cedar gives a policy no way to see a value it does not name:
// an attribute is read only by `.name` or `has name`, a tag only by getTag or hasTag, an entity's parents
// only by `in`, and `context` as a whole (compared, put in a set) is the only way to see every attribute at
// once. A request that leaves out what none of its policies names is therefore judged exactly as the whole
// request, and each value left out is one less Cedar has to parse (several µs each in cedar-wasm).
export interface PolicyReads {
  // The context's attributes named, or 'all' when a policy uses `context` itself.
  context: Names;
  // Attributes read of `principal`, of `resource`, and of any other entity (a literal, an `if`'s answer),
  // which may be either.
  principal: Names;
  resource: Names;
  other: Names;
  tags: boolean;
  // Some policy asks `in` of the principal or of the resource (in its scope or, for both, its conditions):
  // that entity's parents are needed.
  hierarchy: { principal: boolean; resource: boolean };
}
type Names = ReadonlySet<string> | 'all';

// The whole request: what a request built without a policy set in view holds.
export const READS_ALL: PolicyReads = {
  context: 'all',
  principal: 'all',
  resource: 'all',
  other: 'all',
  tags: true,
  hierarchy: { principal: true, resource: true },
};

const varOf = (node: unknown): unknown => (typeof node === 'object' && node !== null ? (node as { Var?: unknown }).Var : undefined);

// What one policy reads, from its JSON (Cedar's EST, as policyToJson gives it). Anything not recognised is walked
// into, so a form this does not know can only add names (a record literal's keys), never hide a read.
export function readsOfPolicy(est: unknown): PolicyReads {
  const named = { context: new Set<string>(), principal: new Set<string>(), resource: new Set<string>(), other: new Set<string>() };
  let wholeContext = false;
  let tags = false;
  const hierarchy = { principal: false, resource: false };
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    for (const [op, value] of Object.entries(node as Record<string, unknown>)) {
      if (op === 'Var' && value === 'context') wholeContext = true;
      if (op === 'getTag' || op === 'hasTag') tags = true;
      // A condition's `in` may reach either entity (through an attribute, an `if`); the scope's names its own.
      if (op === 'in') hierarchy.principal = hierarchy.resource = true;
      const access =
        (op === '.' || op === 'has') && typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
      const names = access === null ? [] : typeof access.attr === 'string' ? [access.attr] : Array.isArray(access.attr) ? access.attr : [];
      if (access !== null && names.length > 0 && names.every((n): n is string => typeof n === 'string')) {
        // `e has a.b` reads e's `a`, and `b` of whatever `a` is (an entity, maybe).
        const of = varOf(access.left);
        if (of === 'context' || of === 'principal' || of === 'resource') named[of].add(names[0]);
        else named.other.add(names[0]);
        names.slice(1).forEach((n) => named.other.add(n));
        if (of === undefined) walk(access.left);
        continue;
      }
      walk(value);
    }
  };
  const { principal, resource, ...rest } = (est ?? {}) as { principal?: unknown; resource?: unknown };
  const scopeIn = (constraint: unknown) => typeof constraint === 'object' && constraint !== null && 'in' in constraint;
  const scopeOp = (constraint: unknown) =>
    typeof constraint === 'object' && constraint !== null ? (constraint as { op?: unknown }).op : undefined;
  hierarchy.principal = scopeOp(principal) === 'in' || scopeIn(principal);
  hierarchy.resource = scopeOp(resource) === 'in' || scopeIn(resource);
  walk(rest);
  return { ...named, context: wholeContext ? 'all' : named.context, tags, hierarchy };
}

// What any of the policies reads.
export function unionOfReads(all: Iterable<PolicyReads>): PolicyReads {
  const union = (names: Names[]): Names => (names.includes('all') ? 'all' : new Set(names.flatMap((n) => [...(n as Set<string>)])));
  const list = [...all];
  return {
    context: union(list.map((r) => r.context)),
    principal: union(list.map((r) => r.principal)),
    resource: union(list.map((r) => r.resource)),
    other: union(list.map((r) => r.other)),
    tags: list.some((r) => r.tags),
    hierarchy: { principal: list.some((r) => r.hierarchy.principal), resource: list.some((r) => r.hierarchy.resource) },
  };
}

const has = (names: Names, name: string) => names === 'all' || names.has(name);
export const readsContext = (reads: PolicyReads, name: string) => has(reads.context, name);
export const readsAttribute = (reads: PolicyReads, of: 'principal' | 'resource', name: string) =>
  has(reads[of], name) || has(reads.other, name);
