import type { ErrorObject } from 'ajv';
import { isPlainObject } from './json-preview.js';
import { declaredTypes, jsonEqual, matchesJsonType, resolveLocalRef, type JsonSchema } from './schema-type.js';

const MAX_SHAPE_DEPTH = 4;

// Keywords whose failure comes with the errors of every sub-schema they tried.
export const GROUPING_KEYWORDS: ReadonlySet<string> = new Set(['anyOf', 'oneOf', 'contains']);

export type BranchChoice =
  | { readonly kind: 'no-shape-fits' }
  | { readonly kind: 'tag-mismatch'; readonly key: string; readonly values: unknown[] }
  | { readonly kind: 'branch'; readonly errors: ErrorObject[] }
  | { readonly kind: 'undecided' };

// The errors of a failed group are the run just before it (AJV appends them while trying each branch).
export function claimBranchErrors(errors: readonly ErrorObject[], index: number): number[] {
  const group = errors[index];
  const prefix = `${group.schemaPath}/`;
  const home = group.schemaPath.slice(0, group.schemaPath.lastIndexOf('/') + 1);
  const members: number[] = [];
  for (let j = index - 1; j >= 0; j--) {
    const e = errors[j];
    const inside = e.schemaPath.startsWith(prefix);
    // Errors raised inside a $ref'd schema carry that schema's path, not the branch's.
    const viaRef = isAtOrUnder(e.instancePath, group.instancePath) && isOutside(e.schemaPath, home);
    if (!inside && !viaRef) break;
    members.push(j);
  }
  return members.reverse();
}

function isAtOrUnder(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

function isOutside(schemaPath: string, home: string): boolean {
  return !schemaPath.startsWith(home) || /^(\$defs|definitions)\//.test(schemaPath.slice(home.length));
}

// Which alternative of a failed anyOf/oneOf the value was meant to be: first by shape (type, const, enum),
// then by discriminator (`kind: { const: 'a' }`), then the one with the fewest errors.
export function chooseBranch(group: ErrorObject, members: ErrorObject[], branches: unknown[], root: JsonSchema): BranchChoice {
  const data = group.data;
  const shaped = branches.map((_, i) => i).filter((i) => shapeFits(branches[i], data, root, 0));
  if (shaped.length === 0) return { kind: 'no-shape-fits' };
  const tagged = shaped.filter((i) => tagsFit(branches[i], data, root));
  if (tagged.length === 0) {
    const mismatch = findTagMismatch(
      shaped.map((i) => branches[i]),
      data,
      root,
    );
    if (mismatch) return { kind: 'tag-mismatch', ...mismatch };
  }
  const byBranch = attributeToBranches(members, group, branches);
  const best = (tagged.length > 0 ? tagged : shaped)
    .filter((i) => (byBranch.get(i)?.length ?? 0) > 0)
    .sort((a, b) => byBranch.get(a)!.length - byBranch.get(b)!.length)[0];
  return best === undefined ? { kind: 'undecided' } : { kind: 'branch', errors: byBranch.get(best)! };
}

function shapeFits(branch: unknown, data: unknown, root: JsonSchema, depth: number): boolean {
  if (branch === false) return false;
  const s = resolveLocalRef(branch, root);
  if (!isPlainObject(s)) return true;
  const types = declaredTypes(s);
  if (types.length > 0 && !types.some((type) => matchesJsonType(type, data))) return false;
  if (Object.hasOwn(s, 'const') && !jsonEqual(s.const, data)) return false;
  if (Array.isArray(s.enum) && !s.enum.some((value: unknown) => jsonEqual(value, data))) return false;
  if (depth >= MAX_SHAPE_DEPTH) return true;
  for (const keyword of ['anyOf', 'oneOf']) {
    const alternatives = s[keyword];
    if (Array.isArray(alternatives) && !alternatives.some((alt: unknown) => shapeFits(alt, data, root, depth + 1))) {
      return false;
    }
  }
  return true;
}

function tagsFit(branch: unknown, data: unknown, root: JsonSchema): boolean {
  if (!isPlainObject(data)) return true;
  return constProperties(branch, root).every(([key, value]) => !Object.hasOwn(data, key) || jsonEqual(value, data[key]));
}

function constProperties(branch: unknown, root: JsonSchema): [string, unknown][] {
  const s = resolveLocalRef(branch, root);
  if (!isPlainObject(s) || !isPlainObject(s.properties)) return [];
  const found: [string, unknown][] = [];
  for (const [key, sub] of Object.entries(s.properties)) {
    const target = resolveLocalRef(sub, root);
    if (isPlainObject(target) && Object.hasOwn(target, 'const')) found.push([key, target.const]);
  }
  return found;
}

// A property every alternative pins with `const`, present in the value with none of those values.
function findTagMismatch(branches: unknown[], data: unknown, root: JsonSchema): { key: string; values: unknown[] } | undefined {
  if (!isPlainObject(data)) return undefined;
  const tables = branches.map((b) => new Map(constProperties(b, root)));
  for (const key of tables[0]?.keys() ?? []) {
    if (!Object.hasOwn(data, key) || !tables.every((table) => table.has(key))) continue;
    return { key, values: [...new Set(tables.map((table) => table.get(key)))] };
  }
  return undefined;
}

// Branch errors carry the branch index in their schemaPath (…/anyOf/1/…) or start with the branch's own $ref;
// errors from deeper $refs sit among their branch's errors, so they go with the branch just before them.
function attributeToBranches(members: ErrorObject[], group: ErrorObject, branches: unknown[]): Map<number, ErrorObject[]> {
  const prefix = `${group.schemaPath}/`;
  const owners = members.map((e) => {
    if (e.schemaPath.startsWith(prefix)) return Number.parseInt(e.schemaPath.slice(prefix.length), 10);
    const byRef = branches.findIndex((b) => isPlainObject(b) && typeof b.$ref === 'string' && e.schemaPath.startsWith(`${b.$ref}/`));
    return byRef >= 0 ? byRef : undefined;
  });
  const byBranch = new Map<number, ErrorObject[]>();
  let previous = owners.find((owner) => owner !== undefined);
  members.forEach((e, i) => {
    const owner = owners[i] ?? previous;
    previous = owner;
    if (owner === undefined) return;
    const list = byBranch.get(owner);
    if (list) list.push(e);
    else byBranch.set(owner, [e]);
  });
  return byBranch;
}
