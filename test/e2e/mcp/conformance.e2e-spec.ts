import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { enableSkill, postSkill, uniqueName } from '../skills/skill-test-kit.js';
import { CONFORMANCE_TOOLS, ConformanceUpstream } from './conformance-upstream.js';
import { KeyAddingProxy } from './key-adding-proxy.js';

// The official MCP conformance suite run as a child process against a project's MCP endpoint, once per
// suite version (SUITES): the release (@modelcontextprotocol/conformance 0.1.16, every server scenario) and
// the newest pre-release (mcp-conformance-next, 0.2.0-alpha.12, the scenarios revision 2026-07-28
// requires, at that revision), every scenario judged here. The suite's
// client sends no credentials, so it talks to a proxy that adds an agent key of the project. The tools its
// scenarios call by name come from an upstream MCP server imported as a skill (conformance-upstream.ts),
// and so do the resources, template, prompts and completion they ask for (relayed: mcp-federation.ts), so
// what is judged is what Toolgate relays. The suite needs Node 22 or later: CONFORMANCE_NODE names that
// binary (.ci/run provides it), else Jest's own Node serves when it is recent enough.

interface Check {
  id: string;
  description: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

// Scenarios a stateless tool gateway passes.
const PASSES = [
  'server-initialize',
  'ping',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-progress',
  // logging/setLevel holds from one POST to the next (kept per key and project), and the upstream's log
  // messages are relayed on the call's event stream.
  'logging-set-level',
  'tools-call-with-logging',
  'resources-list',
  // The fixtures' resources, template, prompts and completion, relayed from the upstream server.
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'completion-complete',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'dns-rebinding-protection',
  'json-schema-2020-12',
];

// Scenarios that do not pass, why, and what each must show instead (its failures, or warnings where it
// finds nothing to judge), so that the reason stays the true one: a scenario that starts to pass, or fails
// for another reason, fails this suite until it is listed again. docs/mcp-clients.md lists the same.
const TO_THE_CLIENT_MID_CALL =
  'a request from the server to the client in the middle of a call needs the answer on another POST, which a stateless endpoint cannot wait for; Toolgate offers no such tool (-32602)';
const NO_SUBSCRIPTIONS = 'no subscriptions: a stateless endpoint on several instances holds no stream to notify on (-32601)';
const DOES_NOT_PASS: Record<string, { why: string; shows: RegExp; partial?: true }> = {
  'tools-call-sampling': { why: `sampling: ${TO_THE_CLIENT_MID_CALL}`, shows: /-32602/ },
  'tools-call-elicitation': { why: `elicitation: ${TO_THE_CLIENT_MID_CALL}`, shows: /-32602/ },
  'elicitation-sep1034-defaults': { why: `elicitation: ${TO_THE_CLIENT_MID_CALL}`, shows: /-32602/ },
  'elicitation-sep1330-enums': { why: `elicitation: ${TO_THE_CLIENT_MID_CALL}`, shows: /-32602/ },
  'resources-subscribe': { why: NO_SUBSCRIPTIONS, shows: /-32601/ },
  'resources-unsubscribe': { why: NO_SUBSCRIPTIONS, shows: /-32601/ },
  'server-sse-polling': {
    why: 'SSE polling and resumption need a session and stored events: a stateless endpoint has neither (warnings, nothing judged)',
    shows: /session/i,
  },
  'server-sse-multiple-streams': {
    why: 'several streams of one session: a stateless endpoint has no session (warnings, nothing judged)',
    shows: /session/i,
  },
};

// The newest pre-release (0.2.0-alpha.12, the dev dependency mcp-conformance-next), run as revision
// 2026-07-28 requires (`--requirements 2026-07-28`: the scenarios that revision requires, frozen at its
// release, spoken at its wire, plus the pending and extension ones it runs without scoring them).
const NEXT_PASSES = [
  // Its diagnostic tools are the upstream's: a client's declared capabilities go to it, and its -32021 for
  // one not declared comes back (HTTP 400); the elicitation one asks in its result, never mid-stream.
  'server-stateless',
  'completion-complete',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-progress',
  'server-sse-multiple-streams',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'sep-2164-resource-not-found',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'dns-rebinding-protection',
  'caching',
  'json-schema-2020-12',
  'http-header-validation',
  // Multi round-trip requests (SEP-2322), relayed: Toolgate speaks 2026-07-28 to the upstream, which asks
  // for input (input-required-fixtures.ts); Toolgate hands its inputRequests on with a requestState of its
  // own, sealed, and the client's retry back with the upstream's state. Toolgate itself refuses malformed
  // inputResponses and a tampered state (-32602), and never answers input_required to tools/list or prompts/list.
  'input-required-result-basic-elicitation',
  'input-required-result-basic-sampling',
  'input-required-result-basic-list-roots',
  'input-required-result-request-state',
  'input-required-result-multiple-input-requests',
  'input-required-result-multi-round',
  'input-required-result-missing-input-response',
  'input-required-result-non-tool-request',
  'input-required-result-result-type',
  'input-required-result-unsupported-methods',
  'input-required-result-tampered-state',
  'input-required-result-capability-check',
  'input-required-result-ignore-extra-params',
  'input-required-result-validate-input',
];
const NOT_RELAYED_TASKS =
  "an upstream's own tasks (the io.modelcontextprotocol/tasks extension) are not relayed: Toolgate's tasks are its parked calls; the fixture offers no such tool";
const NEXT_DOES_NOT_PASS: Record<string, { why: string; shows: RegExp; partial?: true }> = {
  ...Object.fromEntries(
    [
      'lifecycle',
      'capability-negotiation',
      'wire-fields',
      'request-state-removal',
      'mrtr-input',
      'request-headers',
      'dispatch-and-envelope',
      'required-task-error',
      'mrtr-composition',
    ].map((name) => [
      `tasks-${name}`,
      { why: NOT_RELAYED_TASKS, shows: /No tool named|Not testable|task|-32602/i, partial: true as const },
    ]),
  ),
  'http-custom-header-server-validation': {
    why: 'custom headers from x-mcp-header annotations (SEP-2243, pending) are not offered: no tool of Toolgate or of its sources declares one',
    shows: /x-mcp-header/,
    partial: true,
  },
};
// Scenarios that judge nothing against a stateless gateway (no check succeeds or fails).
const NEXT_NOTHING_JUDGED = ['tasks-status-notifications'];

interface Suite {
  title: string;
  // The package whose dist/index.js is the suite's command line, and how it is told which scenarios to run.
  cli: string;
  args: string[];
  passes: string[];
  doesNotPass: Record<string, { why: string; shows: RegExp; partial?: true }>;
  nothingJudged: string[];
  // The fixture tools its scenarios call, which must have run on the upstream server.
  calls: string[];
  // The prompts it gets beside those every suite gets.
  prompts: string[];
  // Whether its client speaks revision 2026-07-28, which Toolgate then speaks to the upstream for its calls and prompts.
  modern: boolean;
}
const CALLED = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_tool_with_progress',
  'test_error_handling',
];
// Every one the input-required scenarios call reaches the upstream at least once (a tampered state's retry does not).
const ASK_FOR_INPUT = [
  ...['elicitation', 'sampling', 'list_roots', 'request_state', 'multiple_inputs', 'multi_round', 'tampered_state', 'capabilities'].map(
    (name) => `test_input_required_result_${name}`,
  ),
  'test_missing_capability',
  'test_streaming_elicitation',
];
const SUITES: Suite[] = [
  {
    title: '0.1.16, every server scenario',
    cli: '@modelcontextprotocol/conformance',
    args: ['--suite', 'all'],
    passes: PASSES,
    doesNotPass: DOES_NOT_PASS,
    nothingJudged: [],
    calls: [...CALLED, 'test_tool_with_logging'],
    prompts: [],
    modern: false,
  },
  {
    title: '0.2.0-alpha.12 at revision 2026-07-28',
    cli: 'mcp-conformance-next',
    args: ['--requirements', '2026-07-28'],
    passes: NEXT_PASSES,
    doesNotPass: NEXT_DOES_NOT_PASS,
    nothingJudged: NEXT_NOTHING_JUDGED,
    calls: [...CALLED, 'test_logging_tool', ...ASK_FOR_INPUT],
    prompts: ['test_input_required_result_prompt'],
    modern: true,
  },
];

const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

function nodeForTheSuite(): string | null {
  const configured = process.env.CONFORMANCE_NODE;
  if (configured) {
    const major = Number(/^v(\d+)/.exec(execFileSync(configured, ['--version'], { encoding: 'utf8' }))?.[1]);
    if (!(major >= 22)) throw new Error(`CONFORMANCE_NODE (${configured}) is Node ${major}; the conformance suite needs 22 or later`);
    return configured;
  }
  return Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : null;
}

const node = nodeForTheSuite();
// CI must run it: there a missing Node 22 is a failure, not a skip.
if (node === null && process.env.CI === 'true')
  throw new Error('CI=true but no Node 22+ for the MCP conformance suite: set CONFORMANCE_NODE');
if (node === null)
  console.warn(`MCP conformance suite skipped: it needs Node 22+ (this is ${process.version}); set CONFORMANCE_NODE to such a binary`);
const describeWithNode = node ? describe : describe.skip;

describeWithNode.each(SUITES)('the official MCP conformance suite $title against a project’s MCP endpoint', (suite) => {
  let t: TestApp;
  const upstream = new ConformanceUpstream();
  let proxy: KeyAddingProxy;
  let outputDir: string;
  let stdout = '';
  let tenantAuth: Record<string, string>;
  let project = '';
  const results = new Map<string, Check[]>();

  beforeAll(async () => {
    await upstream.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` } });
    const tenant = await t.createTenant();
    const projectId = (await t.createProject(tenant)).id;
    tenantAuth = tenant.auth;
    project = projectId;
    const tools = CONFORMANCE_TOOLS.map((tool) => tool.name);
    const imported = await postSkill(t, tenant, {
      name: uniqueName('conformance'),
      version: '1.0.0',
      description: 'The conformance fixtures',
      source: { type: 'mcp', url: upstream.url, tools },
    });
    expect({ status: imported.status, body: imported.status === 201 ? 'imported' : imported.body }).toEqual({
      status: 201,
      body: 'imported',
    });
    expect((await enableSkill(t, tenant, projectId, imported.body.id as string)).status).toBe(201);
    const agent = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'conformance', role: 'agent', projectIds: [projectId] })
      .expect(201);
    proxy = new KeyAddingProxy(t.port, { Authorization: `Bearer ${agent.body.key as string}` });
    const url = `http://127.0.0.1:${await proxy.start()}/v1/projects/${projectId}/mcp`;

    outputDir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-conformance-'));
    const cli = path.join(path.dirname(createRequire(import.meta.url).resolve(`${suite.cli}/package.json`)), 'dist/index.js');
    // It exits 1 when a scenario fails; what failed, and why, is judged below scenario by scenario.
    stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        node!,
        [cli, 'server', '--url', url, ...suite.args, '--output-dir', outputDir],
        { timeout: 150_000, maxBuffer: 16 * 1024 * 1024 },
        (error, out) => {
          // Killed (the timeout) or not started: no exit code, no results to judge.
          if (error && typeof error.code !== 'number')
            reject(new Error(`The conformance suite did not finish: ${error.message}`, { cause: error }));
          else resolve(out);
        },
      );
    });
    for (const entry of await readdir(outputDir)) {
      const scenario = RESULT_DIR.exec(entry)?.[1];
      if (scenario) results.set(scenario, JSON.parse(await readFile(path.join(outputDir, entry, 'checks.json'), 'utf8')) as Check[]);
    }
    // The suite's own summary, as a person running it sees it.
    console.log(stdout.slice(stdout.indexOf('=== SUMMARY ===')));
  }, 200_000);

  afterAll(async () => {
    await proxy?.stop();
    await t?.close();
    await upstream.stop();
    if (outputDir) await rm(outputDir, { recursive: true, force: true });
  });

  const shown = (scenario: string, status: Check['status']) =>
    (results.get(scenario) ?? [])
      .filter((check) => check.status === status)
      .map((check) => `${check.id}: ${check.errorMessage ?? check.description}`);

  it('ran every scenario it has, each of them expected to pass or listed with why it does not', () => {
    expect([...results.keys()].sort()).toEqual([...suite.passes, ...Object.keys(suite.doesNotPass), ...suite.nothingJudged].sort());
  });

  it.each(suite.passes)('passes %s', (scenario) => {
    expect(shown(scenario, 'FAILURE')).toEqual([]);
    expect(shown(scenario, 'SUCCESS').length).toBeGreaterThan(0);
  });

  it.each(Object.entries(suite.doesNotPass).map(([scenario, { why }]) => [scenario, why] as const))('does not pass %s: %s', (scenario) => {
    const failures = shown(scenario, 'FAILURE');
    // A scenario that passes in part (its other checks succeed) still fails only for the reason given.
    if (!suite.doesNotPass[scenario].partial) expect(shown(scenario, 'SUCCESS')).toEqual([]);
    const findings = failures.length > 0 ? failures : shown(scenario, 'WARNING');
    expect(findings.length).toBeGreaterThan(0);
    for (const finding of findings) expect(finding).toMatch(suite.doesNotPass[scenario].shows);
  });

  it.each(suite.nothingJudged.length > 0 ? suite.nothingJudged : ['(none)'])('judges nothing in %s', (scenario) => {
    expect([...shown(scenario, 'SUCCESS'), ...shown(scenario, 'FAILURE')]).toEqual([]);
  });

  it('relayed the resource reads, prompts and completion to the upstream server, each read and prompt audited', async () => {
    expect(new Set(upstream.requests)).toEqual(
      new Set([
        'resources/read test://static-text',
        'resources/read test://static-binary',
        'resources/read test://template/123/data',
        'prompts/get test_simple_prompt',
        'prompts/get test_prompt_with_arguments',
        'prompts/get test_prompt_with_embedded_resource',
        'prompts/get test_prompt_with_image',
        'completion/complete test_prompt_with_arguments arg1=test',
        ...suite.prompts.map((name) => `prompts/get ${name}`),
      ]),
    );
    const audited = async (tool: string) =>
      (
        (await t.http.get(`/v1/projects/${project}/invocations`).query({ tool, limit: 100 }).set(tenantAuth).expect(200)).body
          .items as Array<{ status: string; channel: string; arguments: { source: string } }>
      ).filter((row) => row.status === 'ok' && row.channel === 'mcp' && row.arguments.source.startsWith('skill:conformance'));
    expect((await audited('resources/read')).length).toBeGreaterThanOrEqual(3);
    expect((await audited('prompts/get')).length).toBeGreaterThanOrEqual(4);
  });

  it('relayed the upstream tools’ calls: the fixtures ran on the upstream server', () => {
    expect(new Set(upstream.calls)).toEqual(new Set(suite.calls));
  });

  it('spoke 2026-07-28 to the upstream for a client of that revision only, the client’s rounds carried both ways', async () => {
    const modern = upstream.modernRequests;
    if (!suite.modern) return expect(modern).toEqual([]);
    // Asked once what it speaks (the answer is kept), then every call and prompt at that revision.
    expect(modern.filter((r) => r.method === 'server/discover')).toHaveLength(1);
    expect(modern.filter((r) => r.method !== 'server/discover' && r.method !== 'tools/call' && r.method !== 'prompts/get')).toEqual([]);
    const rounds = modern.filter((r) => r.name === 'test_input_required_result_multi_round');
    // Three rounds: the second and third with the client's answers and the upstream's own state, not Toolgate's.
    expect(rounds.map((r) => r.inputResponses ?? [])).toEqual([[], ['step1'], ['step2']]);
    expect(rounds.slice(1).every((r) => typeof r.requestState === 'string' && !r.requestState.startsWith('tgenc:'))).toBe(true);
    // The client's capabilities went along: the capability check declared sampling only.
    expect(modern.find((r) => r.name === 'test_input_required_result_capabilities')?.capabilities).toEqual({ sampling: {} });
    // Each round of a call is its own audit row: the intermediate ones say input_required.
    const rows = (
      await t.http
        .get(`/v1/projects/${project}/invocations`)
        .query({ tool: 'test_input_required_result_multi_round', limit: 100 })
        .set(tenantAuth)
        .expect(200)
    ).body.items as Array<{ status: string; channel: string }>;
    expect(rows.map((row) => row.status).sort()).toEqual(['input_required', 'input_required', 'ok']);
  });
});
