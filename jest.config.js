// Nest 12 is ESM-only, so Jest runs in ESM mode (NODE_OPTIONS=--experimental-vm-modules, see package.json).
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // @fastify/static requires content-disposition 3, which is ESM only; Jest on Node 20 cannot require ESM.
    // Version 2 (CommonJS, same `create` API) stands in under Jest; plain Node loads version 3.
    '^content-disposition$': '<rootDir>/node_modules/content-disposition',
  },
  // tsconfig.json sets isolatedModules, so ts-jest transpiles each file on its own (no type check: the
  // typecheck is `npm run typecheck`, and `npm run check` runs it before the tests).
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testTimeout: 30000,
  // Two suites at a time: most of a suite's time is spent waiting on child processes, servers and timers, so
  // two share these two-core machines well. Each suite loads the whole app into a fresh module registry and
  // the worker's heap keeps growing from suite to suite (about 35 MB each), until garbage collection takes
  // over and hooks time out: a worker past this much heap after a suite is replaced by a fresh one.
  maxWorkers: 2,
  workerIdleMemoryLimit: '1GB',
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
};
