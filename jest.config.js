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
  // two share these two-core machines well. Each suite loads the whole app into a fresh module registry that
  // stays in the worker's heap after the suite, about 30 MB each (a heap snapshot shows the suite's context
  // held by Node's own handles of its vm modules, on Node 20 and 24, not by anything of the app's), and
  // everything the worker does slows as that heap grows (a PGlite database's start doubled over twelve
  // suites): a worker past this much heap after a suite is replaced by a fresh one, which costs about a
  // second. At 1 GB the whole run took a third more CPU; 300 MB was no faster than 400.
  maxWorkers: 2,
  workerIdleMemoryLimit: '400MB',
  // Files of parts (`*.part.ts`, imported by one `*.e2e-spec.ts`) are ordered by the size of their parts.
  testSequencer: '<rootDir>/test/support/test-sequencer.mjs',
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
};
