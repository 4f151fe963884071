import { compileRedactionPlan, type RedactionPlan } from './argument-redaction.js';
import { parseToolArguments } from './argument-parser.js';
import { createToolAjv, type ToolAjv } from './ajv-factory.js';
import { PatternTooCostly } from './linear-patterns.js';
import { schemaExpansion } from './schema-expansion.js';
import { compileMapPlan, pairsToMaps } from './map-pairs.js';
import { compileNullPlan, dropAbsentNulls } from './null-as-absent.js';
import type { JsonSchema } from './schema-type.js';
import { describeAjvErrors, invalidArguments, usageLine, type ToolRef } from './validation-message.js';

export interface CompiledToolValidator {
  readonly toolName: string;
  readonly usage: string;
  readonly inputSchema: JsonSchema;
  // Where the schema marks values writeOnly (null: nowhere); the audit, events and logs never see them.
  readonly redaction: RedactionPlan | null;
  // Throws the 422 `invalid_arguments` AppError; `args` must come from `parseToolArguments` (or `parse` below).
  validate(args: Record<string, unknown>): void;
  // The whole gate, in order: JSON object, forbidden keys and depth, maps sent as `{name, value}` lists made
  // maps again, nulls of optional parameters dropped, then the schema.
  parse(raw: unknown): Record<string, unknown>;
}

// `lazy`: Ajv compiles the schema on the first call instead of now (a tenant's skill tools, vetted already:
// a registration of a hundred tools does not compile a hundred schemas on the event loop, and a tool never
// called is never compiled). A schema that does not compile then throws on that call.
export function compileToolValidator(
  ajv: ToolAjv,
  toolName: string,
  inputSchema: JsonSchema,
  opts: { lazy?: boolean } = {},
): CompiledToolValidator {
  if (inputSchema.type !== 'object') {
    throw new Error(`input schema of tool '${toolName}' must have "type": "object"`);
  }
  // A private copy: a caller mutating its schema later cannot desynchronise the validator and the usage line.
  const schema = deepFreeze(structuredClone(inputSchema));
  const compile = (): ReturnType<ToolAjv['compile']> => {
    try {
      return ajv.compile(schema);
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw new Error(`input schema of tool '${toolName}' does not compile: ${reason}`, { cause });
    }
  };
  let check: ReturnType<ToolAjv['compile']> | null = opts.lazy === true ? null : compile();
  const tool: ToolRef = { name: toolName, usage: usageLine(toolName, schema) };
  const nulls = compileNullPlan(schema);
  const maps = compileMapPlan(schema);
  // Collecting every error costs up to one per subschema per part of the value: past ALL_ERRORS_BUDGET the
  // value is checked by a validator that stops at its first error (made on first need, then kept).
  const expansion = schemaExpansion(schema, Number.MAX_SAFE_INTEGER);
  const largestValue = Math.floor(ALL_ERRORS_BUDGET / expansion);
  let firstError: ReturnType<ToolAjv['compile']> | null = null;
  const validate = (args: Record<string, unknown>): void => {
    let valid: boolean;
    const checker = valueSize(args, largestValue) > largestValue ? (firstError ??= ajv.compileFirstError(schema)) : (check ??= compile());
    try {
      valid = checker(args);
    } catch (error) {
      if (!(error instanceof PatternTooCostly)) throw error;
      throw invalidArguments(tool, [{ path: '', keyword: 'pattern', message: `${error.message}; send a shorter value` }]);
    }
    if (valid) return;
    const { issues, omitted } = describeAjvErrors(checker.errors ?? [], schema);
    throw invalidArguments(tool, issues, omitted);
  };
  return {
    toolName,
    usage: tool.usage,
    inputSchema: schema,
    redaction: compileRedactionPlan(schema),
    validate,
    parse(raw) {
      // A null for an optional parameter that does not take null means "absent" (strict converters send it),
      // and a map may come as the `{name, value}` list Toolgate's strict definitions ask for.
      const args = dropAbsentNulls(pairsToMaps(parseToolArguments(raw, tool), maps), nulls);
      validate(args);
      return args;
    },
  };
}

// Errors AJV may collect for one value (each one is an object with the schema and value around it).
const ALL_ERRORS_BUDGET = 200_000;

// How many values (objects, arrays and scalars) a value holds, counted up to `past` + 1.
function valueSize(value: unknown, past: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= past) {
    const node = stack.pop();
    count++;
    if (typeof node === 'object' && node !== null) for (const child of Object.values(node)) stack.push(child);
  }
  return count;
}

function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null || Object.isFrozen(node)) continue;
    Object.freeze(node);
    for (const child of Object.values(node)) stack.push(child);
  }
  return value;
}

interface CacheEntry {
  readonly validator: CompiledToolValidator;
  readonly fingerprint: string;
}

// Validators are compiled at registration or start-up (`getOrCompile`) and only looked up per request (`get`).
// Keys are stable and versioned, e.g. `builtin:read_file` or `skill:<id>@<version>:<tool>`. One cache per Ajv
// instance, i.e. per trust domain.
export class ToolValidatorCache {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(private readonly ajv: ToolAjv = createToolAjv()) {}

  getOrCompile(key: string, toolName: string, inputSchema: JsonSchema): CompiledToolValidator {
    const fingerprint = JSON.stringify([toolName, inputSchema]);
    const hit = this.entries.get(key);
    if (hit) {
      // A key names one schema version; a different schema under it would leave a stale validator in place.
      if (hit.fingerprint !== fingerprint) {
        throw new Error(`validator '${key}' is already compiled from a different schema`);
      }
      return hit.validator;
    }
    const validator = compileToolValidator(this.ajv, toolName, inputSchema);
    this.entries.set(key, { validator, fingerprint });
    return validator;
  }

  get(key: string): CompiledToolValidator {
    const hit = this.entries.get(key);
    if (!hit) throw new Error(`no validator compiled for '${key}'; compile it at registration or start-up`);
    return hit.validator;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  // Frees the compiled code too (Ajv keeps every compiled schema until it is removed).
  delete(key: string): boolean {
    const hit = this.entries.get(key);
    if (!hit) return false;
    this.ajv.removeSchema(hit.validator.inputSchema);
    return this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
