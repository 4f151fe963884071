import { createHash } from 'node:crypto';
import { canonicalJson } from '../../common/json/canonical-json.js';
import type { JsonSchema } from '../../execution/validation/schema-type.js';
import type { DescriptionFlag } from './description-rules.js';

// A tool definition as an MCP server answers it, the part a model reads or a call depends on.
export interface UpstreamDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: Record<string, unknown>;
}

// What was reviewed: the definition's hash (SHA-256 of its canonical JSON), when, and for a tool of an MCP
// source the upstream's own definition, which the next answers are compared with.
export interface DefinitionPin {
  hash: string;
  reviewedAt: string;
  upstream?: UpstreamDefinition;
  // What the description rules found when it was reviewed (an admin accepted it as it is).
  flags?: DescriptionFlag[];
}

// One difference between two definitions: a JSON pointer and the values on each side (absent: not there).
export interface DefinitionDiffEntry {
  path: string;
  before?: unknown;
  after?: unknown;
}

const MAX_DIFF_ENTRIES = 200;
// Keys that describe a schema without changing what it accepts.
const ANNOTATION_KEYS = new Set(['description', 'title', 'examples', 'default', '$comment', 'deprecated', 'readOnly', 'writeOnly']);

export const definitionHash = (definition: unknown): string =>
  `sha256:${createHash('sha256').update(canonicalJson(definition)).digest('hex')}`;

// The fields of an upstream tool that are pinned; anything else it sends (icons, _meta) is not served.
export function upstreamDefinition(tool: {
  name: string;
  title?: string;
  description?: string;
  inputSchema: object;
  outputSchema?: object;
  annotations?: object;
}): UpstreamDefinition {
  return {
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    ...(tool.description !== undefined && { description: tool.description }),
    inputSchema: tool.inputSchema as JsonSchema,
    ...(tool.outputSchema !== undefined && { outputSchema: tool.outputSchema as JsonSchema }),
    ...(tool.annotations !== undefined && { annotations: { ...(tool.annotations as Record<string, unknown>) } }),
  };
}

// The differences between two JSON values, objects compared key by key and anything else whole; at most
// MAX_DIFF_ENTRIES (a schema rewritten from top to bottom is one long review either way).
export function definitionDiff(before: unknown, after: unknown): DefinitionDiffEntry[] {
  const entries: DefinitionDiffEntry[] = [];
  const work: Array<[string, unknown, unknown]> = [['', before, after]];
  while (work.length > 0 && entries.length < MAX_DIFF_ENTRIES) {
    const [path, a, b] = work.shift()!;
    if (isObject(a) && isObject(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) work.push([`${path}/${escapePointer(key)}`, a[key], b[key]]);
      continue;
    }
    if (a !== undefined && b !== undefined && canonicalJson(a) === canonicalJson(b)) continue;
    entries.push({ path: path || '/', ...(a !== undefined && { before: a }), ...(b !== undefined && { after: b }) });
  }
  return entries;
}

// Whether the new input schema may refuse arguments the pinned one accepts, so that a model still shown the
// pinned definition would send calls the server now refuses. Conservative: a parameter newly required, one
// dropped from a closed object, or any change to a parameter's (or the object's) constraints counts; only
// descriptions, titles, examples and defaults may change freely, and new optional parameters may appear.
export function incompatibleChange(pinned: JsonSchema, proposed: JsonSchema): string | null {
  const oldRequired = new Set(asStrings(pinned.required));
  const added = asStrings(proposed.required).filter((name) => !oldRequired.has(name));
  if (added.length > 0) return `now requires ${added.map((n) => `'${n}'`).join(', ')}`;
  const oldProperties = isObject(pinned.properties) ? pinned.properties : {};
  const newProperties = isObject(proposed.properties) ? proposed.properties : {};
  for (const [name, schema] of Object.entries(oldProperties)) {
    if (!(name in newProperties)) {
      if (proposed.additionalProperties === false) return `no longer takes '${name}'`;
      continue;
    }
    if (constraints(schema) !== constraints(newProperties[name])) return `changed what '${name}' accepts`;
  }
  const rest = (schema: JsonSchema) => {
    const { properties: _p, required: _r, ...others } = schema;
    return constraints(others);
  };
  if (rest(pinned) !== rest(proposed)) return 'changed the constraints of its arguments object';
  return null;
}

// A schema's canonical text without its annotation keywords (at every level).
function constraints(schema: unknown): string {
  return canonicalJson(stripAnnotations(schema));
}

function stripAnnotations(value: unknown): unknown {
  const root: { v: unknown } = { v: undefined };
  const work: Array<[unknown, (copy: unknown) => void, boolean]> = [[value, (copy) => (root.v = copy), false]];
  while (work.length > 0) {
    const [node, set, inProperties] = work.pop()!;
    if (Array.isArray(node)) {
      const copy: unknown[] = new Array<unknown>(node.length);
      set(copy);
      node.forEach((item, i) => work.push([item, (c) => (copy[i] = c), false]));
    } else if (isObject(node)) {
      const copy: Record<string, unknown> = {};
      set(copy);
      for (const [key, item] of Object.entries(node)) {
        // Inside `properties`, keys are parameter names, not keywords.
        if (!inProperties && ANNOTATION_KEYS.has(key)) continue;
        work.push([
          item,
          (c) => (copy[key] = c),
          !inProperties && (key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'definitions'),
        ]);
      }
    } else {
      set(node);
    }
  }
  return root.v;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const asStrings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
