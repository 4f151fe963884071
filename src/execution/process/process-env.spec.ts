import { RunRefused } from './run-refused.js';
import { buildChildEnv, validateEnv } from './process-env.js';

describe('validateEnv', () => {
  it.each([
    'LD_PRELOAD',
    'LD_LIBRARY_PATH',
    'LD_AUDIT',
    'ld_preload',
    'DYLD_INSERT_LIBRARIES',
    'NODE_OPTIONS',
    'PATH',
    'BASH_ENV',
    'ENV',
    'GCONV_PATH',
    '1ABC',
    'A-B',
    'A=B',
    '',
    'X Y',
  ])('refuses %j as invalid_env', (name) => {
    let caught: unknown;
    try {
      validateEnv({ [name]: 'x' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RunRefused);
    expect(caught).toMatchObject({ code: 'invalid_env' });
  });

  it('refuses a value with a NUL byte', () => {
    expect(() => validateEnv({ FOO: 'a\0b' })).toThrow(RunRefused);
  });

  it('accepts ordinary names', () => {
    expect(() => validateEnv({ FOO: 'bar', _x1: '', GIT_AUTHOR_NAME: 'agent', LANG: 'en_US.UTF-8' })).not.toThrow();
  });
});

describe('buildChildEnv', () => {
  it('starts from nothing but the minimal variables and the caller entries', () => {
    process.env.TOOLGATE_ENV_CANARY = 'leak';
    try {
      const env = buildChildEnv({ home: '/work/ws', tmp: '/tmp' }, { FOO: 'bar' });
      expect(Object.keys(env).sort()).toEqual(['FOO', 'HOME', 'LANG', 'PATH', 'TMPDIR']);
      expect(env).toMatchObject({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/work/ws', LANG: 'C.UTF-8', TMPDIR: '/tmp' });
    } finally {
      delete process.env.TOOLGATE_ENV_CANARY;
    }
  });
});
