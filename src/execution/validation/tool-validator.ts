import { compileRedactionPlan, type RedactionPlan } from './argument-redaction.js';
import { parseToolArguments } from './argument-parser.js';
import { createToolAjv, type ToolAjv } from './ajv-factory.js';
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
  // The whole gate, in order: JSON object, forbidden keys and depth, nulls of optional parameters dropped, then the schema.
  parse(raw: unknown): Record<string, unknown>;
}

export function compileToolValidator(ajv: ToolAjv, toolName: string, inputSchema: JsonSchema): CompiledToolValidator {
  if (inputSchema.type !== 'object') {
    throw new Error(`input schema of tool '${toolName}' must have "type": "object"`);
  }
  // A private copy: a caller mutating its schema later cannot desynchronise the validator and the usage line.
  const schema = deepFreeze(structuredClone(inputSchema));
  let check: ReturnType<ToolAjv['compile']>;
  try {
    check = ajv.compile(schema);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(`input schema of tool '${toolName}' does not compile: ${reason}`, { cause });
  }
  const tool: ToolRef = { name: toolName, usage: usageLine(toolName, schema) };
  const nulls = compileNullPlan(schema);
  const validate = (args: Record<string, unknown>): void => {
    if (check(args)) return;
    const { issues, omitted } = describeAjvErrors(check.errors ?? [], schema);
    throw invalidArguments(tool, issues, omitted);
  };
  return {
    toolName,
    usage: tool.usage,
    inputSchema: schema,
    redaction: compileRedactionPlan(schema),
    validate,
    parse(raw) {
      // A null for an optional parameter that does not take null means "absent" (strict converters send it).
      const args = dropAbsentNulls(parseToolArguments(raw, tool), nulls);
      validate(args);
      return args;
    },
  };
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
