import { Ajv, type CodeOptions, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

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
  // No `loadSchema`: a `$ref` to anything outside the schema fails at compile time instead of fetching it.
});

export interface ToolAjvOptions {
  // A linear-time engine (e.g. re2) for `pattern` in tenant schemas; the default is RegExp with the `u` flag.
  readonly regExp?: CodeOptions['regExp'];
}

// One instance per trust domain (the built-in tools, each tenant): schemas never resolve across instances.
export function createToolAjv(options: ToolAjvOptions = {}): Ajv {
  const ajv = new Ajv({ ...TOOL_AJV_OPTIONS, ...(options.regExp ? { code: { regExp: options.regExp } } : {}) });
  addFormats(ajv);
  return ajv;
}
