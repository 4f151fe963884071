// The import rules of src/ (docs/architecture.md, "Layers"): no circle, and no import running back up a floor.
// test/architecture/import-graph.spec.ts runs these rules over src/ with dependency-cruiser's API, so
// `npm test` fails on a violation; `npx depcruise src` prints the same list.
//
// Type-only imports count (tsPreCompilationDeps): a type two files each need from the other belongs in a
// leaf file both import (e.g. skills/executors/executor-specs.ts, tenants/key-grant.ts).

// The floors, top to bottom. A file may import its own floor and the floors below it; each floor is
// named by the folders it holds, and a rule below forbids every path of src/ outside what a floor may see.
const BELOW_CONFIG = [];
const BELOW_DATABASE = ['config', ...BELOW_CONFIG];
const BELOW_COMMON = ['database', ...BELOW_DATABASE];
const BELOW_KIT = ['common', ...BELOW_COMMON];
const BELOW_METRICS = ['execution', ...BELOW_KIT];

// Tests may reach anywhere; the prisma client is generated code every floor may name.
const NOT_A_TEST = String.raw`\.spec\.ts$`;
const onlyFolders = (own, below) => String.raw`^src/(${[own, ...below, 'generated'].join('|')})/`;

const floor = (name, own, below, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^src/${own}/`, pathNot: NOT_A_TEST },
  to: { path: '^src/', pathNot: onlyFolders(own, below) },
});

// In projects/, what the features below the project routes may use: ProjectAccess and what it is built from.
const PROJECT_ACCESS = String.raw`^src/projects/(project-access(\.module)?|project-settings|projects\.repository|projects\.errors)\.ts$`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Two files that each need the other, type-only imports included: move what they share into a leaf file.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'app-on-top',
      comment: 'main.ts, app.module and app-worker.* assemble everything; nothing they assemble imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: [String.raw`^src/(main|app\.module|app-worker[^/]*)\.ts$`, NOT_A_TEST] },
      to: { path: String.raw`^src/(main|app\.module|app-worker[^/]*)\.ts$` },
    },
    floor('metrics-below-features', 'metrics', BELOW_METRICS, 'The features report to metrics; it names none of them.'),
    floor('kit-below-metrics', 'execution', BELOW_KIT, 'The execution kit names no feature: it takes what it needs as parameters.'),
    floor('common-below-kit', 'common', BELOW_COMMON, 'common/ holds generic mechanisms: no feature, no kit, no metrics.'),
    floor('database-below-common', 'database', BELOW_DATABASE, 'Drivers, PrismaService and the migrator read the config only.'),
    floor('config-at-the-bottom', 'config', BELOW_CONFIG, 'The environment schema imports nothing of src/.'),
    {
      name: 'tool-routes-above-call-control',
      comment: 'The routes of /v1/projects/:projectId/tools (tools/routes/) sit above call control (calls/) and the call path (tools/).',
      severity: 'error',
      from: { path: '^src/(calls|tools)/', pathNot: ['^src/tools/routes/', NOT_A_TEST] },
      to: { path: '^src/tools/routes/' },
    },
    {
      name: 'call-control-above-call-path',
      comment: 'calls/ (idempotency keys, approvals) wraps the call path; the call path never reaches back up into it.',
      severity: 'error',
      from: { path: '^src/tools/', pathNot: ['^src/tools/routes/', NOT_A_TEST] },
      to: { path: '^src/calls/' },
    },
    {
      name: 'skill-review-above-skills-and-tools',
      comment: 'skills/review sends tool events and re-checks skills: skills and tools never import it.',
      severity: 'error',
      from: { path: '^src/(skills|tools)/', pathNot: ['^src/skills/review/', NOT_A_TEST] },
      to: { path: '^src/skills/review/' },
    },
    {
      name: 'toolsets-above-skills',
      comment: 'Toolsets hand skills their name claims (ToolNameClaims); skills never import toolsets.',
      severity: 'error',
      from: { path: '^src/skills/', pathNot: NOT_A_TEST },
      to: { path: '^src/toolsets/' },
    },
    {
      name: 'project-routes-above-features',
      comment: 'Below the project routes a feature asks ProjectAccess, never ProjectsService or its routes.',
      severity: 'error',
      from: { path: '^src/(workspace|tools|skills|audit)/', pathNot: NOT_A_TEST },
      to: { path: '^src/projects/', pathNot: PROJECT_ACCESS },
    },
    {
      name: 'project-access-below-project-routes',
      comment: 'ProjectAccess sits below the features that ask it, so it may not import the project routes.',
      severity: 'error',
      from: { path: PROJECT_ACCESS },
      to: { path: '^src/', pathNot: [PROJECT_ACCESS, onlyFolders('metrics', BELOW_METRICS)] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
