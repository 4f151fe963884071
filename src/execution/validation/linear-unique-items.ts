import { _, str, type CodeKeywordDefinition, type KeywordErrorDefinition } from 'ajv';

// `uniqueItems` in linear time, for every schema a ToolAjv compiles (built-in tools, tenant skills, upstream MCP
// tools). AJV's own keyword hashes items only when the schema declares them scalars; otherwise it compares every
// pair, on the event loop: 64,000 two-item arrays in one 565 KB call held it for 20 s. Here each item is written
// once in a canonical form (object keys sorted) and looked up in a map: as fast for arrays of arrays as for
// strings, with AJV's error (same keyword, params and message), so the messages built from it are unchanged.

// JSON Schema equality: same type, numbers by value, arrays item by item, objects key by key in any order.
// Arguments are parsed JSON no deeper than MAX_ARGUMENT_DEPTH (argument-parser.ts) before they are validated,
// so the recursion is bounded.
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  // Numbers, strings, booleans and null as JSON writes them (-0 as 0, like ===). Anything JSON cannot hold
  // (undefined, a function) cannot come from parsed arguments; it is told apart by its type name.
  return JSON.stringify(value) ?? `<${typeof value}>`;
}

// The first two equal items as [earlier, later] indices, or null when all differ.
export function firstDuplicate(items: readonly unknown[]): [number, number] | null {
  const seen = new Map<string, number>();
  for (let index = 0; index < items.length; index++) {
    const key = canonical(items[index]);
    const earlier = seen.get(key);
    if (earlier !== undefined) return [earlier, index];
    seen.set(key, index);
  }
  return null;
}

const error: KeywordErrorDefinition = {
  message: ({ params: { i, j } }) => str`must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
  params: ({ params: { i, j } }) => _`{i: ${i}, j: ${j}}`,
};

export const linearUniqueItems: CodeKeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  error,
  code(cxt) {
    const { gen, data } = cxt;
    if (cxt.schema !== true) return;
    const find = gen.scopeValue('func', { ref: firstDuplicate });
    const pair = gen.const('pair', _`${find}(${data})`);
    // AJV's own order: i the earlier index, j the later one.
    cxt.setParams({ i: _`${pair}[0]`, j: _`${pair}[1]` });
    cxt.fail(_`${pair} !== null`);
  },
};
