import { createTenantAjv } from '../../skills/schema-vetting.js';
import { BUILTIN_TOOL_NAMES } from '../../execution/builtin-tool-names.js';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';

type Schema = Record<string, unknown>;

// Every property of a schema, however deep (properties, array items, anyOf branches), with its path.
function* propertiesOf(schema: Schema, path: string): Generator<[string, Schema]> {
  for (const [name, property] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
    yield [`${path}.${name}`, property];
    yield* propertiesOf(property, `${path}.${name}`);
  }
  if (typeof schema.items === 'object' && schema.items !== null) yield* propertiesOf(schema.items as Schema, `${path}[]`);
  for (const branch of (schema.anyOf as Schema[] | undefined) ?? []) yield* propertiesOf(branch, path);
}

// What the MCP Inspector's schema lint takes as typed: one `type` (not a list of them, its `type-union`
// warning), or `anyOf` branches of one `type` each; a schema with neither is its `untyped-schema`.
const typeOf = (schema: Schema): string | null => {
  if (typeof schema.type === 'string') return schema.type;
  const branches = schema.anyOf as Schema[] | undefined;
  if (Array.isArray(branches) && branches.length > 0 && branches.every((branch) => typeof branch.type === 'string'))
    return branches.map((branch) => branch.type).join('|');
  return null;
};

describe('the built-in tools’ output schemas', () => {
  it('describe every built-in tool', () => {
    expect(Object.keys(BUILTIN_OUTPUTS).sort()).toEqual([...BUILTIN_TOOL_NAMES].sort());
  });

  it('give every property, however deep, a type: one type, or anyOf branches of one type each', () => {
    const untyped: string[] = [];
    for (const [tool, { outputSchema }] of Object.entries(BUILTIN_OUTPUTS)) {
      expect(typeOf(outputSchema)).toBe('object');
      for (const [path, property] of propertiesOf(outputSchema, tool))
        if (typeOf(property) === null) untyped.push(`${path}: ${JSON.stringify(property)}`);
    }
    expect(untyped).toEqual([]);
  });

  it('take what shell_exec answers: a command that exited, and one a signal or a limit stopped', () => {
    const validate = createTenantAjv().compile(BUILTIN_OUTPUTS.shell_exec.outputSchema);
    const ran = {
      exitCode: 0,
      signal: null,
      stdout: 'hi',
      stderr: '',
      stdoutTruncated: false,
      stderrTruncated: false,
      killed: null,
      note: null,
      durationMs: 3,
    };
    expect(validate(ran)).toBe(true);
    expect(validate({ ...ran, exitCode: null, signal: 'SIGKILL', killed: 'memory_limit', note: 'The command was stopped' })).toBe(true);
    expect(validate({ ...ran, killed: 'bored' })).toBe(false);
    expect(validate({ ...ran, note: 3 })).toBe(false);
  });
});
