import { createToolAjv } from '../execution/validation/ajv-factory.js';
import { redactRawArguments } from '../execution/validation/argument-redaction.js';
import type { JsonSchema } from '../execution/validation/schema-type.js';
import { compileToolValidator } from '../execution/validation/tool-validator.js';
import { toOpenAiStrict } from './openai-strict.js';
import { fitsOpenAiStrictMode, formatTool } from './tool-formats.js';

// fetch_url's and shell_exec's shapes: constraints, optional parameters, a free-form map of strings.
const FETCH: JsonSchema = {
  type: 'object',
  properties: {
    url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 8192, description: 'An http(s) URL' },
    method: { type: 'string', enum: ['GET', 'POST'], description: 'Default GET' },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 8192 },
      maxProperties: 64,
      description: 'Request headers',
    },
    timeoutMs: { type: 'integer', minimum: 100, maximum: 60_000 },
  },
  required: ['url'],
  additionalProperties: false,
};
const ENV: JsonSchema = {
  type: 'object',
  properties: {
    argv: { type: 'array', items: { type: 'string' }, minItems: 1 },
    env: { type: 'object', additionalProperties: { type: 'string', writeOnly: true }, propertyNames: { pattern: '^[A-Z_]+$' } },
  },
  required: ['argv'],
  additionalProperties: false,
};

describe('toOpenAiStrict', () => {
  it('closes every object, makes optional parameters required and nullable, says the constraints, and lists a map as {name, value} pairs', () => {
    const strict = toOpenAiStrict(FETCH)!;
    expect(fitsOpenAiStrictMode(FETCH)).toBe(false);
    expect(fitsOpenAiStrictMode(strict)).toBe(true);
    expect(strict).toEqual({
      type: 'object',
      properties: {
        url: {
          type: 'string',
          description: 'An http(s) URL (at most 8192 characters; matching the regular expression ^https?://; format: uri)',
        },
        method: { type: ['string', 'null'], enum: ['GET', 'POST', null], description: 'Default GET' },
        headers: {
          type: ['array', 'null'],
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, value: { type: 'string', description: '(at most 8192 characters)' } },
            required: ['name', 'value'],
            additionalProperties: false,
          },
          description: 'Request headers (at most 64 entries; each entry as {name, value})',
        },
        timeoutMs: { type: ['integer', 'null'], description: '(at least 100; at most 60000)' },
      },
      required: ['url', 'method', 'headers', 'timeoutMs'],
      additionalProperties: false,
    });
  });

  it('leaves a schema it cannot show strictly as it is, strict: false', () => {
    const tuple = { type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }] } } };
    const anything = { type: 'object', properties: { data: { type: 'object' } } };
    const inItems = {
      type: 'object',
      properties: { list: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } } },
    };
    for (const schema of [tuple, anything, inItems]) {
      expect(toOpenAiStrict(schema)).toBeNull();
      expect(formatTool({ name: 't', description: 'd', inputSchema: schema } as never, 'openai', { strict: true })).toMatchObject({
        function: { parameters: schema, strict: false },
      });
    }
  });

  it('answers format=openai-responses the same way when asked, and leaves the listing as it was when not', () => {
    const tool = { name: 'fetch_url', description: 'Fetch', inputSchema: FETCH } as never;
    expect(formatTool(tool, 'openai-responses', { strict: true })).toMatchObject({ parameters: toOpenAiStrict(FETCH), strict: true });
    expect(formatTool(tool, 'openai')).toMatchObject({ function: { parameters: FETCH, strict: false } });
  });
});

describe('a call made with the strict definition', () => {
  const fetch = compileToolValidator(createToolAjv(), 'fetch_url', FETCH);
  const shell = compileToolValidator(createToolAjv(), 'shell_exec', ENV);

  it('is mapped back before validation: nulls are absent, pairs are the map, and the full schema decides', () => {
    const sent = { url: 'https://example.com', method: null, headers: [{ name: 'Accept', value: 'text/plain' }], timeoutMs: null };
    expect(fetch.parse(sent)).toEqual({ url: 'https://example.com', headers: { Accept: 'text/plain' } });
    expect(fetch.parse(JSON.stringify(sent))).toEqual({ url: 'https://example.com', headers: { Accept: 'text/plain' } });
    // What the strict definition only described is still checked.
    expect(() => fetch.parse({ ...sent, url: 'ftp://example.com' })).toThrow(/url/);
    expect(() => shell.parse({ argv: ['env'], env: [{ name: 'lower', value: 'x' }] })).toThrow(/env/);
  });

  it('refuses pairs that do not make a map (a name twice, a forbidden name, another shape) instead of guessing', () => {
    for (const env of [
      [
        { name: 'A', value: '1' },
        { name: 'A', value: '2' },
      ],
      [{ name: '__proto__', value: '1' }],
      [{ key: 'A', value: '1' }],
    ]) {
      expect(() => shell.parse({ argv: ['env'], env })).toThrow(/env/);
    }
  });

  it("keeps the map's writeOnly values out of a refused call's recorded arguments, in the pairs form too", () => {
    const redacted = redactRawArguments({ argv: [], env: [{ name: 'TOKEN', value: 'hunter2-secret' }] }, shell.redaction);
    expect(JSON.stringify(redacted.value)).not.toContain('hunter2-secret');
    expect(redacted.paths).toEqual(['/env/0/value']);
    expect(redacted.secrets).toContain('hunter2-secret');
  });
});
