import { jest } from '@jest/globals';
import { AppError } from '../../common/errors/app-error.js';
import { createToolAjv } from './ajv-factory.js';
import type { JsonSchema } from './schema-type.js';
import { compileToolValidator, ToolValidatorCache } from './tool-validator.js';

const readFileSchema = (): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: ['path'],
  properties: {
    path: { type: 'string' },
    offset: { type: 'integer', minimum: 0, default: 0 },
    limit: { type: 'integer', minimum: 1 },
  },
});

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('nothing was thrown');
}

// The body the global filter writes for an AppError: { error: { code, message, ...extra } }.
const bodyOf = (error: AppError) => ({ error: { code: error.code, message: error.message, ...error.extra } });

describe('compileToolValidator', () => {
  const ajv = createToolAjv();
  const readFile = compileToolValidator(ajv, 'read_file', readFileSchema());

  it('exposes the usage line', () => {
    expect(readFile.usage).toBe('read_file(path: string, offset?: integer, limit?: integer)');
  });

  it('answers 422 invalid_arguments with tool, issues and usage for read_file {"path": 5, "extra": 1}', () => {
    const error = thrown(() => readFile.validate({ path: 5, extra: 1 })) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error.status).toBe(422);
    expect(bodyOf(error)).toEqual({
      error: {
        code: 'invalid_arguments',
        message:
          'Invalid arguments for read_file: /path must be string, got number; unknown parameter: extra. ' +
          'Usage: read_file(path: string, offset?: integer, limit?: integer)',
        tool: 'read_file',
        issues: [
          {
            path: '/path',
            keyword: 'type',
            message: '/path must be string, got number',
            expected: 'string',
            received: '5',
          },
          { path: '/extra', keyword: 'additionalProperties', message: 'unknown parameter: extra', received: '1' },
        ],
        usage: 'read_file(path: string, offset?: integer, limit?: integer)',
      },
    });
  });

  it('accepts valid arguments without coercing them or filling in defaults', () => {
    const args = { path: 'README.md' };
    expect(() => readFile.validate(args)).not.toThrow();
    expect(args).toEqual({ path: 'README.md' });
    expect(thrown(() => readFile.validate({ path: 'a', limit: '5' }))).toBeInstanceOf(AppError);
  });

  it('parses a JSON string, then validates it', () => {
    expect(readFile.parse('{"path": "README.md", "limit": 5}')).toEqual({ path: 'README.md', limit: 5 });
    const error = thrown(() => readFile.parse('{"path": 5}')) as AppError;
    expect(error.message).toContain('/path must be string, got number');
  });

  it('[sec-37] refuses a forbidden key before the schema runs', () => {
    const error = thrown(() => readFile.parse('{"path": "a", "__proto__": {"isAdmin": true}}')) as AppError;
    const issues = (error.extra as { issues: { keyword: string }[] }).issues;
    expect(issues.map((issue) => issue.keyword)).toEqual(['forbiddenKey']);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it('is not changed by a later mutation of the schema it was compiled from', () => {
    const schema = readFileSchema();
    const validator = compileToolValidator(createToolAjv(), 'read_file', schema);
    (schema.properties as Record<string, JsonSchema>).path.type = 'integer';
    expect(() => validator.validate({ path: 'still a string' })).not.toThrow();
    expect(validator.usage).toBe('read_file(path: string, offset?: integer, limit?: integer)');
  });

  it('refuses an input schema that is not an object schema', () => {
    expect(() => compileToolValidator(ajv, 'bad', { type: 'string' })).toThrow(/must have "type": "object"/);
  });

  it('names the tool when its schema does not compile in strict mode', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', colour: 'red' } } };
    expect(() => compileToolValidator(ajv, 'painter', schema)).toThrow(
      /input schema of tool 'painter' does not compile: strict mode: unknown keyword: "colour"/,
    );
  });
});

describe('ToolValidatorCache', () => {
  it('compiles each schema exactly once, however many calls it validates', () => {
    const ajv = createToolAjv();
    const compile = jest.spyOn(ajv, 'compile');
    const cache = new ToolValidatorCache(ajv);
    for (let i = 0; i < 5; i++) cache.getOrCompile('builtin:read_file', 'read_file', readFileSchema());
    for (let i = 0; i < 1_000; i++) {
      const validator = cache.get('builtin:read_file');
      validator.validate({ path: `file-${i}.txt` });
      expect(() => validator.validate({ path: i })).toThrow(AppError);
    }
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('returns the same validator for the same key', () => {
    const cache = new ToolValidatorCache();
    const first = cache.getOrCompile('skill:s1@1.0.0:search', 'search', readFileSchema());
    expect(cache.getOrCompile('skill:s1@1.0.0:search', 'search', readFileSchema())).toBe(first);
    expect(cache.get('skill:s1@1.0.0:search')).toBe(first);
    expect(cache.size).toBe(1);
  });

  it('throws on the request path for a key that was never compiled', () => {
    const cache = new ToolValidatorCache();
    expect(() => cache.get('builtin:nope')).toThrow(/no validator compiled for 'builtin:nope'/);
  });

  it('refuses a different schema under a key that is already compiled', () => {
    const cache = new ToolValidatorCache();
    cache.getOrCompile('builtin:read_file', 'read_file', readFileSchema());
    const changed = { ...readFileSchema(), required: [] };
    expect(() => cache.getOrCompile('builtin:read_file', 'read_file', changed)).toThrow(/different schema/);
  });

  it('compiles two versions of a schema with the same $id side by side', () => {
    const cache = new ToolValidatorCache();
    const v1 = { $id: 'https://skills.example/search', ...readFileSchema() };
    const v2 = { ...v1, required: [] };
    cache.getOrCompile('skill:s1@1:search', 'search', v1);
    expect(() => cache.getOrCompile('skill:s1@2:search', 'search', v2)).not.toThrow();
    expect(() => cache.get('skill:s1@2:search').validate({})).not.toThrow();
  });

  it('forgets a deleted validator', () => {
    const cache = new ToolValidatorCache();
    cache.getOrCompile('builtin:read_file', 'read_file', readFileSchema());
    expect(cache.delete('builtin:read_file')).toBe(true);
    expect(cache.has('builtin:read_file')).toBe(false);
    expect(() => cache.get('builtin:read_file')).toThrow();
    expect(cache.delete('builtin:read_file')).toBe(false);
  });
});
