import { Ajv, type AnySchema, type CodeOptions, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { linearUniqueItems } from './linear-unique-items.js';

// ajv-formats is CommonJS with `exports.default`; imported from ESM under nodenext, the default import is the
// whole `module.exports`, so the plugin function is its `.default` (true at runtime for node and for Jest).
const addFormats = addFormatsModule.default;

export const TOOL_AJV_OPTIONS: Readonly<Options> = Object.freeze({
  strict: true,
  // `type: ["string", "null"]` is ordinary in tool schemas; strict mode refuses it unless allowed explicitly.
  allowUnionTypes: true,
  allErrors: true,
  // Errors carry the offending value and the schema around it: the messages quote both.
  verbose: true,
  // `required: ["toString"]` must not be satisfied by Object.prototype.
  ownProperties: true,
  useDefaults: false,
  coerceTypes: false,
  removeAdditional: false,
  // `$data` turns argument values into schema values (regex patterns included): never.
  $data: false,
  // A compiled schema's `$id` is not registered in the instance, so one tool's schema cannot $ref another's
  // and a new version of a schema with the same `$id` compiles beside the old one.
  addUsedSchema: false,
  validateFormats: true,
  // strict mode otherwise refuses ordinary schemas such as `anyOf: [{ required: ['a'] }, { required: ['b'] }]`.
  strictRequired: false,
  // Nor a tuple without minItems (`prefixItems: [...]` alone, or draft-07's `items: [...]`): valid JSON Schema,
  // ordinary in MCP servers' tools, whose meaning is plain (items past the tuple are allowed unless refused).
  strictTuples: false,
  // No `loadSchema`: a `$ref` to anything outside the schema fails at compile time instead of fetching it.
});

export const JSON_SCHEMA_DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

export type SchemaDialect = 'draft-07' | '2020-12';

// Keywords that only 2020-12 (and 2019-09) define, every one of them. A schema without `$schema` that uses
// one cannot mean draft-07 (strict draft-07 would refuse it as unknown), so it is read as 2020-12, MCP's
// default dialect. (`$comment`, `$defs`, `$vocabulary`, `contentSchema` and the annotations mean the same in both.)
const ONLY_2020_12 = [
  '$anchor',
  '$dynamicAnchor',
  '$dynamicRef',
  'prefixItems',
  'dependentSchemas',
  'dependentRequired',
  'unevaluatedProperties',
  'unevaluatedItems',
  'minContains',
  'maxContains',
];

// The dialect a tool schema is read in: its `$schema` when it names one of the two; without `$schema`,
// draft-07 (Toolgate's schemas and most MCP servers' are written for it, and where the two dialects
// differ, as in `items: [...]`, draft-07's meaning is the one their authors wrote for) unless a keyword
// only 2020-12 has says otherwise. Any other `$schema` is refused by schema vetting before it gets here.
export function schemaDialect(schema: AnySchema): SchemaDialect {
  if (typeof schema !== 'object' || schema === null) return 'draft-07';
  const declared = (schema as { $schema?: unknown }).$schema;
  if (typeof declared === 'string')
    return /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(declared) ? '2020-12' : 'draft-07';
  return usesOnly2020Keywords(schema) ? '2020-12' : 'draft-07';
}

function usesOnly2020Keywords(root: object): boolean {
  const stack: unknown[] = [root];
  let visited = 0;
  while (stack.length > 0 && visited++ < 10_000) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (!Array.isArray(node) && ONLY_2020_12.some((keyword) => Object.hasOwn(node, keyword))) return true;
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return false;
}

export interface ToolAjvOptions {
  // A linear-time engine (e.g. re2) for `pattern` in tenant schemas; the default is RegExp with the `u` flag.
  readonly regExp?: CodeOptions['regExp'];
}

// The two dialects cannot share one Ajv instance (2020-12 changes the meaning of `items`), so a ToolAjv holds
// one of each, the 2020-12 one made on first use, and sends each schema to its dialect's.
// The validators stop at the first error when made by `compileFirstError`, for values too large to collect
// every error of (see tool-validator.ts).
export class ToolAjv {
  private readonly draft07: Ajv;
  private draft2020: Ajv2020 | null = null;
  private firstErrorDraft07: Ajv | null = null;
  private firstErrorDraft2020: Ajv2020 | null = null;

  constructor(private readonly options: ToolAjvOptions = {}) {
    this.draft07 = withToolKeywords(new Ajv(this.ajvOptions(true)));
  }

  compile<T = unknown>(schema: AnySchema): ValidateFunction<T> {
    return this.instanceFor(schema).compile<T>(schema);
  }

  compileFirstError<T = unknown>(schema: AnySchema): ValidateFunction<T> {
    const ajv =
      schemaDialect(schema) === 'draft-07'
        ? (this.firstErrorDraft07 ??= withToolKeywords(new Ajv(this.ajvOptions(false))))
        : (this.firstErrorDraft2020 ??= new2020(this.ajvOptions(false)));
    return ajv.compile<T>(schema);
  }

  removeSchema(schema: AnySchema): void {
    this.instanceFor(schema).removeSchema(schema);
    if (schemaDialect(schema) === 'draft-07') this.firstErrorDraft07?.removeSchema(schema);
    else this.firstErrorDraft2020?.removeSchema(schema);
  }

  private instanceFor(schema: AnySchema): Ajv {
    if (schemaDialect(schema) === 'draft-07') return this.draft07;
    return (this.draft2020 ??= new2020(this.ajvOptions(true)));
  }

  private ajvOptions(allErrors: boolean): Options {
    return { ...TOOL_AJV_OPTIONS, allErrors, ...(this.options.regExp ? { code: { regExp: this.options.regExp } } : {}) };
  }
}

// AJV resolves `$ref: "#name"` to a 2020-12 `$anchor` (resolve.ts) but does not list `$anchor` among the
// keywords it knows, so strict mode refused every schema naming one: it is declared here, with nothing to check.
function new2020(options: Options): Ajv2020 {
  const ajv = withToolKeywords(new Ajv2020(options));
  ajv.addKeyword({ keyword: '$anchor', schemaType: 'string' });
  return ajv;
}

function withToolKeywords<T extends Ajv>(ajv: T): T {
  addFormats(ajv);
  // AJV's uniqueItems compares every pair of items unless they are declared scalars (linear-unique-items.ts).
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(linearUniqueItems);
  return ajv;
}

// One instance per trust domain (the built-in tools, each tenant): schemas never resolve across instances.
export function createToolAjv(options: ToolAjvOptions = {}): ToolAjv {
  return new ToolAjv(options);
}
