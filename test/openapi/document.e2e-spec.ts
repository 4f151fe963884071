import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestApp, type TestApp } from '../support/test-app.js';

// The published document as its users meet it: Redocly's recommended lint, then a typed client generated
// with openapi-typescript, a program written against it compiled with tsc and run against the real service.

const root = fileURLToPath(new URL('../../', import.meta.url));
const clientDir = path.join(root, 'test/openapi/client');
// Gitignored, rewritten by every run.
const generated = path.join(clientDir, 'generated');
const documentFile = path.join(generated, 'openapi.json');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const run = (command: string, args: string[], env: Record<string, string> = {}): Promise<Run> =>
  new Promise((resolve) => {
    execFile(command, args, { cwd: root, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });

const bin = (relative: string) => path.join(root, 'node_modules', relative);

// Each warning the recommended ruleset leaves, and why it stays:
const EXPLAINED_WARNINGS = [
  // package.json says UNLICENSED: there is no SPDX identifier and no URL to give for it.
  'info-license-strict #/info/license',
  // The health routes answer 200 or 503 and nothing in 4xx: they take no input and no credentials.
  'operation-4xx-response #/paths/~1health~1live/get/responses',
  'operation-4xx-response #/paths/~1health~1ready/get/responses',
  // Anthropic's input_schema as one oneOf branch: an open object whose `type` is required, while the property
  // itself stays required (Nest writes an inline `required` list over the property's own flag).
  'no-illogical-composition-keywords #/components/schemas/AnthropicToolDto/properties/input_schema/oneOf',
];

describe('the OpenAPI document as a client meets it', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    const doc = await t.http.get('/openapi.json').expect(200);
    await rm(generated, { recursive: true, force: true });
    await mkdir(generated, { recursive: true });
    await writeFile(documentFile, JSON.stringify(doc.body, null, 2));
  });
  afterAll(() => t?.close());

  it("passes Redocly's recommended lint with no error, and only the explained warnings", async () => {
    const lint = await run(
      process.execPath,
      [bin('@redocly/cli/bin/cli.js'), 'lint', documentFile, '--config', 'redocly.yaml', '--format', 'json'],
      {
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      },
    );
    const report = JSON.parse(lint.stdout) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
    };
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
    expect(lint.code).toBe(0);
    const warnings = report.problems.filter((p) => p.severity === 'warn').map((p) => `${p.ruleId} ${p.location[0]?.pointer}`);
    expect(warnings.sort()).toEqual([...EXPLAINED_WARNINGS].sort());
  });

  it('generates a typed client that a program creating a project, listing tools, invoking one, paging the audit log and reading an invocation compiles against, and runs', async () => {
    const types = await run(process.execPath, [
      bin('openapi-typescript/bin/cli.js'),
      documentFile,
      '-o',
      path.join(generated, 'toolgate-api.ts'),
    ]);
    expect({ code: types.code, stderr: types.code === 0 ? '' : types.stderr }).toEqual({ code: 0, stderr: '' });

    // tsc checks the program against the generated types and, with noEmitOnError, writes it only if it compiles.
    const tsc = await run(process.execPath, [bin('typescript/bin/tsc'), '-p', path.join(clientDir, 'tsconfig.json')]);
    expect({ code: tsc.code, output: tsc.stdout }).toEqual({ code: 0, output: '' });

    const port = t.port;
    const tenant = await t.createTenant();
    const program = await run(process.execPath, [path.join(generated, 'out/client-program.js')], {
      TOOLGATE_URL: `http://127.0.0.1:${port}`,
      TOOLGATE_KEY: tenant.key,
    });
    expect({ code: program.code, stderr: program.stderr }).toEqual({ code: 0, stderr: '' });
    const summary = JSON.parse(program.stdout);
    expect(summary.project.shellEnabled).toBe(false);
    expect(Object.keys(summary.toolCounts)).toEqual(['native', 'openai', 'openai-responses', 'anthropic', 'mcp']);
    expect(new Set(Object.values(summary.toolCounts))).toEqual(new Set([10]));
    expect(summary.invoked.status).toBe('ok');
    expect(summary.refusal).toEqual({ code: 'invalid_arguments', issues: 1, usage: expect.stringContaining('read_file(') });
    expect(summary.logged).toEqual([
      { id: summary.invoked.invocationId, tool: 'list_files', status: 'ok' },
      { id: expect.any(String), tool: 'read_file', status: 'invalid_arguments' },
    ]);
    expect(summary.invocation).toEqual({ id: summary.invoked.invocationId, tool: 'list_files', status: 'ok' });
  }, 90_000);
});
