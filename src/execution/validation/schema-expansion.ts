// How much checking one value against a schema can cost: the number of subschemas applied at one place
// once every `$ref` is followed. Size and depth limits do not bound it: a chain of definitions each naming
// the one before twice (`allOf: [{$ref: d9}, {$ref: d9}]`) is a few hundred bytes and 2^n subschemas, which
// AJV checks one by one (and, with allErrors, reports one error each). A `$ref` cycle costs its length once
// when it passes through a keyword that moves into the value (properties, items, ...): the value's own
// depth then bounds it. A cycle that stays at the same value never ends, so it is an error.

// Subschema keywords: one schema, a list of schemas, a map of names to schemas.
const ONE = [
  'not',
  'if',
  'then',
  'else',
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
];
const LIST = ['allOf', 'anyOf', 'oneOf', 'items', 'prefixItems'];
const MAP = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies'];
// Those that apply their schemas to a part of the value rather than the value itself.
const INTO_THE_VALUE = new Set([
  'items',
  'additionalItems',
  'prefixItems',
  'contains',
  'additionalProperties',
  'properties',
  'patternProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
// `$ref` hops followed one inside another before giving up (definitions are at most a few thousand).
const MAX_CHAIN = 2_000;

export class SchemaExpansionError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SchemaExpansionError';
  }
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

// The subschemas applied at one place, at most `limit` (past it, an error saying so).
export function schemaExpansion(root: unknown, limit: number): number {
  if (!isNode(root)) return 1;
  const index = indexSchema(root);
  const done = new Map<Node, number>();
  // A schema being expanded, with how many steps into the value the walk had taken when it entered it.
  const entered = new Map<Node, number>();
  const expand = (node: unknown, into: number, chain: number): number => {
    if (!isNode(node)) return 1;
    const known = done.get(node);
    if (known !== undefined) return known;
    const at = entered.get(node);
    if (at !== undefined) {
      if (into > at) return 1;
      throw new SchemaExpansionError('a $ref cycle applies a schema to the same value again and again, without moving into it');
    }
    if (chain > MAX_CHAIN) throw new SchemaExpansionError(`$ref chains are followed at most ${MAX_CHAIN} deep`);
    entered.set(node, into);
    let size = 1;
    const add = (child: unknown, keyword: string) => {
      size += expand(child, into + (INTO_THE_VALUE.has(keyword) ? 1 : 0), chain);
      if (size > limit) throw new SchemaExpansionError(`it applies more than ${limit} subschemas to one value once its $refs are followed`);
    };
    for (const [keyword, value] of Object.entries(node)) {
      if (ONE.includes(keyword) && !Array.isArray(value)) add(value, keyword);
      else if (LIST.includes(keyword) && Array.isArray(value)) for (const child of value) add(child, keyword);
      else if (MAP.includes(keyword) && isNode(value))
        for (const child of Object.values(value)) if (isNode(child) || typeof child === 'boolean') add(child, keyword);
    }
    for (const keyword of ['$ref', '$dynamicRef']) {
      const ref = node[keyword];
      if (typeof ref !== 'string') continue;
      for (const target of index.resolve(node, ref)) {
        size += expand(target, into, chain + 1);
        if (size > limit)
          throw new SchemaExpansionError(`it applies more than ${limit} subschemas to one value once its $refs are followed`);
      }
    }
    entered.delete(node);
    done.set(node, size);
    return size;
  };
  return expand(root, 0, 0);
}

// Where references inside the schema lead: the resource each subschema belongs to (its nearest `$id` that is
// not a bare fragment, else the root) for `#/pointer` and `#`, and the anchors (`$anchor`, `$dynamicAnchor`,
// draft-07's `$id: "#name"`) for `#name`. A reference it cannot follow leads nowhere here: schema vetting only
// admits local references, and AJV refuses at compile time one that does not resolve.
function indexSchema(root: Node) {
  const resourceOf = new Map<Node, Node>();
  const anchors = new Map<string, Node[]>();
  const stack: Array<{ node: unknown; resource: Node }> = [{ node: root, resource: root }];
  while (stack.length > 0) {
    const { node, resource } = stack.pop()!;
    if (Array.isArray(node)) {
      for (const child of node) stack.push({ node: child, resource });
      continue;
    }
    if (!isNode(node)) continue;
    const id = node.$id;
    const own = typeof id === 'string' && !id.startsWith('#') ? node : resource;
    resourceOf.set(node, own);
    for (const name of [node.$anchor, node.$dynamicAnchor, typeof id === 'string' && id.startsWith('#') ? id.slice(1) : undefined]) {
      if (typeof name === 'string') anchors.set(name, [...(anchors.get(name) ?? []), node]);
    }
    for (const child of Object.values(node)) stack.push({ node: child, resource: own });
  }
  return {
    resolve(from: Node, ref: string): unknown[] {
      const hash = ref.indexOf('#');
      if (hash !== 0) return [];
      const fragment = ref.slice(1);
      if (fragment === '' || fragment.startsWith('/')) {
        const target = followPointer(resourceOf.get(from) ?? root, fragment);
        return target === undefined ? [] : [target];
      }
      return anchors.get(fragment) ?? [];
    },
  };
}

function followPointer(start: unknown, pointer: string): unknown {
  let node = start;
  for (const raw of pointer.split('/').slice(1)) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
