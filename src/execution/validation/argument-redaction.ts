import { isSensitiveName, REDACTED, redactText } from '../../common/secrets/secret-redaction.js';
import { isPlainObject } from './json-preview.js';
import { isPairList } from './map-pairs.js';
import { type JsonSchema, resolveLocalRef } from './schema-type.js';

// Arguments as they may be kept and shown: what was redacted, where (JSON Pointers), and the values
// taken out, so a message that quotes one can be scrubbed too. `value` is the input itself when nothing
// was redacted (no copy on the hot path).
export interface RedactedArguments {
  value: unknown;
  paths: string[];
  secrets: string[];
}

// Where a schema marks values `"writeOnly": true`, compiled once per tool schema into a graph the argument
// walk follows: one node per subschema, `also` for the subschemas that apply at the same place
// (allOf/anyOf/oneOf/if/then/else and local $refs).
interface PlanNode {
  writeOnly: boolean;
  properties: Map<string, PlanNode>;
  // additionalProperties and patternProperties: read as "any other key" (over-redacting a key that a
  // pattern would not match is safe; running a tenant's pattern here is not needed).
  otherProperties: PlanNode | null;
  items: PlanNode | null;
  tuple: PlanNode[];
  also: PlanNode[];
}

export interface RedactionPlan {
  readonly root: PlanNode;
}

// Null when the schema marks nothing writeOnly: the call path then only looks at key names.
export function compileRedactionPlan(schema: JsonSchema): RedactionPlan | null {
  if (!JSON.stringify(schema).includes('"writeOnly":true')) return null;
  const nodes = new Map<object, PlanNode>();
  const build = (raw: unknown): PlanNode | null => {
    const node = resolveLocalRef(raw, schema);
    if (!isPlainObject(node)) return null;
    const known = nodes.get(node);
    if (known) return known;
    const plan: PlanNode = {
      writeOnly: node.writeOnly === true,
      properties: new Map(),
      otherProperties: null,
      items: null,
      tuple: [],
      also: [],
    };
    nodes.set(node, plan);
    if (isPlainObject(node.properties)) {
      for (const [key, sub] of Object.entries(node.properties)) {
        const child = build(sub);
        if (child) plan.properties.set(key, child);
      }
    }
    const others = [node.additionalProperties, ...(isPlainObject(node.patternProperties) ? Object.values(node.patternProperties) : [])]
      .map(build)
      .filter((n): n is PlanNode => n !== null);
    if (node.unevaluatedProperties !== undefined)
      others.push(...[build(node.unevaluatedProperties)].filter((n): n is PlanNode => n !== null));
    plan.otherProperties = merged(others);
    // The positional schemas (draft-07's `items` list, 2020-12's `prefixItems`), then those for every other
    // item; `contains` may apply to any item, so it is read as applying to all of them.
    const tuple = Array.isArray(node.prefixItems) ? node.prefixItems : Array.isArray(node.items) ? node.items : null;
    if (tuple) plan.tuple = tuple.map((s) => build(s) ?? emptyNode());
    const rest = [tuple === node.items ? node.additionalItems : node.items, node.contains, node.unevaluatedItems]
      .map(build)
      .filter((n): n is PlanNode => n !== null);
    plan.items = merged(rest);
    for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
      if (Array.isArray(node[keyword])) for (const sub of node[keyword] as unknown[]) pushNode(plan.also, build(sub));
    }
    for (const keyword of ['if', 'then', 'else']) pushNode(plan.also, build(node[keyword]));
    // Schemas that apply to the same value when a property is present.
    for (const keyword of ['dependentSchemas', 'dependencies']) {
      if (isPlainObject(node[keyword])) for (const sub of Object.values(node[keyword])) pushNode(plan.also, build(sub));
    }
    return plan;
  };
  const root = build(schema);
  if (!root) return null;
  // A writeOnly value the walk above cannot place (under `$dynamicRef`, an anchor, a `$ref` beside other
  // keywords, `not`, ...) must still never be kept: then the whole arguments are redacted.
  const placed = new Set<object>(nodes.keys());
  if (writeOnlyNodes(schema).some((node) => !placed.has(node))) {
    const secret: PlanNode = { ...emptyNode(), writeOnly: true };
    return { root: { ...emptyNode(), otherProperties: secret, items: secret } };
  }
  return { root };
}

// Every subschema object marked writeOnly, wherever it is in the schema.
function writeOnlyNodes(schema: JsonSchema): object[] {
  const found: object[] = [];
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (!Array.isArray(node) && (node as { writeOnly?: unknown }).writeOnly === true) found.push(node);
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return found;
}

const emptyNode = (): PlanNode => ({ writeOnly: false, properties: new Map(), otherProperties: null, items: null, tuple: [], also: [] });
const pushNode = (list: PlanNode[], node: PlanNode | null) => void (node && list.push(node));
const merged = (nodes: PlanNode[]): PlanNode | null => {
  if (nodes.length <= 1) return nodes[0] ?? null;
  return { ...emptyNode(), also: nodes };
};

// The nodes that apply at one place: the node and everything its `also` reaches.
function expand(nodes: readonly PlanNode[]): PlanNode[] {
  const out: PlanNode[] = [];
  const seen = new Set<PlanNode>();
  const stack = [...nodes];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    out.push(node);
    stack.push(...node.also);
  }
  return out;
}

// Past this depth a refused call's arguments are not kept at all (valid arguments stop at 64 levels).
const MAX_WALK_DEPTH = 80;
// Values kept to scrub messages with, per call.
const MAX_SECRETS = 64;

// Redacts a parsed arguments value: sensitive key names anywhere, writeOnly values of the plan, and in every
// other string what common/secrets/secret-redaction.ts finds by value (a credential's format, a `?api_key=`
// in a URL, a `"password"` member in a string body); such a string keeps the rest of its text.
export function redactArguments(value: unknown, plan: RedactionPlan | null): RedactedArguments {
  const paths: string[] = [];
  const secrets: string[] = [];
  const take = (found: unknown, path: string) => {
    paths.push(path);
    collectSecrets(found, secrets);
    return REDACTED;
  };
  const visit = (node: unknown, plans: readonly PlanNode[], path: string, depth: number): unknown => {
    if (typeof node === 'string') {
      const found: string[] = [];
      const text = redactText(node, found);
      if (text === node) return node;
      paths.push(path);
      for (const secret of found) if (secrets.length < MAX_SECRETS) secrets.push(secret);
      return text;
    }
    if (typeof node !== 'object' || node === null) return node;
    if (depth > MAX_WALK_DEPTH) return take(node, path);
    const here = plans.length > 0 ? expand(plans) : plans;
    if (Array.isArray(node)) {
      let copy: unknown[] | null = null;
      // A map sent as a `{name, value}` list (strict definitions, map-pairs.ts): each value as the map's.
      const pairs =
        here.some((p) => p.otherProperties !== null) && !here.some((p) => p.items !== null || p.tuple.length > 0) && isPairList(node);
      for (let i = 0; i < node.length; i++) {
        const childPlans = pairs
          ? [pairPlan(propertyPlans(here, (node[i] as { name: string }).name))]
          : here.length > 0
            ? itemPlans(here, i)
            : here;
        const before: unknown = node[i];
        const after = childPlans.some((p) => p.writeOnly)
          ? take(before, `${path}/${i}`)
          : visit(before, childPlans, `${path}/${i}`, depth + 1);
        if (after !== before) (copy ??= node.slice())[i] = after;
      }
      return copy ?? node;
    }
    let copy: Record<string, unknown> | null = null;
    for (const key of Object.keys(node)) {
      const before = Object.getOwnPropertyDescriptor(node, key)?.value as unknown;
      const childPlans = here.length > 0 ? propertyPlans(here, key) : here;
      const childPath = `${path}/${escapePointer(key)}`;
      const after =
        isSensitiveName(key) || childPlans.some((p) => p.writeOnly)
          ? take(before, childPath)
          : visit(before, childPlans, childPath, depth + 1);
      if (after !== before) (copy ??= { ...(node as Record<string, unknown>) })[key] = after;
    }
    return copy ?? node;
  };
  const redacted = visit(value, plan ? [plan.root] : [], '', 1);
  return paths.length === 0 ? { value, paths, secrets } : { value: redacted, paths, secrets };
}

function propertyPlans(plans: readonly PlanNode[], key: string): PlanNode[] {
  const out: PlanNode[] = [];
  for (const p of plans) {
    const child = p.properties.get(key) ?? p.otherProperties;
    if (child) out.push(child);
  }
  return out;
}

// A `{name, value}` pair whose value is read as the map's value under that name.
function pairPlan(plans: PlanNode[]): PlanNode {
  const value: PlanNode = plans.length === 1 ? plans[0] : { ...emptyNode(), writeOnly: plans.some((p) => p.writeOnly), also: plans };
  return { ...emptyNode(), properties: new Map([['value', value]]) };
}

function itemPlans(plans: readonly PlanNode[], index: number): PlanNode[] {
  const out: PlanNode[] = [];
  for (const p of plans) {
    const child = p.tuple[index] ?? p.items;
    if (child) out.push(child);
  }
  return out;
}

const escapePointer = (key: string) => (/[~/]/.test(key) ? key.replaceAll('~', '~0').replaceAll('/', '~1') : key);

// Every scalar of a redacted value, as text, so messages quoting it can be scrubbed.
function collectSecrets(value: unknown, into: string[]): void {
  const stack = [value];
  while (stack.length > 0 && into.length < MAX_SECRETS) {
    const node = stack.pop();
    if (typeof node === 'string' || typeof node === 'number') into.push(String(node));
    else if (typeof node === 'object' && node !== null) stack.push(...(Object.values(node) as unknown[]));
  }
}

// The `arguments` field as received: an object, or JSON text (OpenAI style). Text that parses is redacted
// as its value and kept as text; text that does not parse gets its `"name": value` pairs of sensitive
// names and its credential-shaped values blanked, as well as text allows.
export function redactRawArguments(raw: unknown, plan: RedactionPlan | null): RedactedArguments {
  if (typeof raw !== 'string') return redactArguments(raw, plan);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return redactUnparsedText(raw);
  }
  const redacted = redactArguments(parsed, plan);
  return redacted.paths.length === 0 ? { value: raw, paths: [], secrets: [] } : { ...redacted, value: JSON.stringify(redacted.value) };
}

const NAME_VALUE_PAIR = /"((?:[^"\\]|\\.)*)"(\s*:\s*)("(?:[^"\\]|\\.)*"?|[^,{}[\]\s]+)/g;

function redactUnparsedText(text: string): RedactedArguments {
  const paths: string[] = [];
  const secrets: string[] = [];
  const named = text.replace(NAME_VALUE_PAIR, (pair, name: string, colon: string, found: string) => {
    if (!isSensitiveName(name)) return pair;
    paths.push(`/${escapePointer(name)}`);
    secrets.push(found.replace(/^"|"$/g, ''));
    return `"${name}"${colon}"${REDACTED}"`;
  });
  const value = redactText(named, secrets);
  if (value !== named && paths.length === 0) paths.push('');
  return { value, paths, secrets };
}
