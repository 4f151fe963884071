import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { enableSkill, postSkill, uniqueName } from '../skills/skill-test-kit.js';
import { CONFORMANCE_TOOLS, ConformanceUpstream } from './conformance-upstream.js';
import { KeyAddingProxy } from './key-adding-proxy.js';

// The official MCP conformance suite (@modelcontextprotocol/conformance, a dev dependency) run as a child
// process against a project's MCP endpoint: every server scenario it has, each judged here. The suite's
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
// for another reason, fails this suite until it is listed again. The README lists the same.
const TO_THE_CLIENT_MID_CALL = 'a request from the server to the client in the middle of a call needs the answer on another POST, which a stateless endpoint cannot wait for; Toolgate offers no such tool (-32602)';
const NO_SUBSCRIPTIONS = 'no subscriptions: a stateless endpoint on several instances holds no stream to notify on (-32601)';
const DOES_NOT_PASS: Record<string, { why: string; shows: RegExp }> = {
  'tools-call-sampling': { why: `sampling: ${TO_THE_CLIENT_MID_CALL}`, shows: /-32602/ },
  'tools-call-elicitation': { why: `elicitation: ${TO_THE_CLIENT_MID_CALL}`, shows: /-32602/ },
  'elicitation-sep1034-defaults': { why: `elicitation: ${TO_THE_CLIENT_MID_CALL}`, shows: /-32602/ },
  'elicitation-sep1330-enums': { why: `elicitation: ${TO_THE_CLIENT_MID_CALL}`, shows: /-32602/ },
  'resources-subscribe': { why: NO_SUBSCRIPTIONS, shows: /-32601/ },
  'resources-unsubscribe': { why: NO_SUBSCRIPTIONS, shows: /-32601/ },
  'server-sse-polling': { why: 'SSE polling and resumption need a session and stored events: a stateless endpoint has neither (warnings, nothing judged)', shows: /session/i },
  'server-sse-multiple-streams': { why: 'several streams of one session: a stateless endpoint has no session (warnings, nothing judged)', shows: /session/i },
};

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
if (node === null && process.env.CI === 'true') throw new Error('CI=true but no Node 22+ for the MCP conformance suite: set CONFORMANCE_NODE');
if (node === null) console.warn(`MCP conformance suite skipped: it needs Node 22+ (this is ${process.version}); set CONFORMANCE_NODE to such a binary`);
const describeWithNode = node ? describe : describe.skip;

describeWithNode('the official MCP conformance suite against a project’s MCP endpoint', () => {
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
    const imported = await postSkill(t, tenant, { name: uniqueName('conformance'), version: '1.0.0', description: 'The conformance fixtures', source: { type: 'mcp', url: upstream.url, tools } });
    expect({ status: imported.status, body: imported.status === 201 ? 'imported' : imported.body }).toEqual({ status: 201, body: 'imported' });
    expect((await enableSkill(t, tenant, projectId, imported.body.id as string)).status).toBe(201);
    const agent = await t.http.post('/v1/api-keys').set(tenant.auth).send({ name: 'conformance', role: 'agent', projectIds: [projectId] }).expect(201);
    proxy = new KeyAddingProxy(t.port, { Authorization: `Bearer ${agent.body.key as string}` });
    const url = `http://127.0.0.1:${await proxy.start()}/v1/projects/${projectId}/mcp`;

    outputDir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-conformance-'));
    const cli = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');
    // It exits 1 when a scenario fails; what failed, and why, is judged below scenario by scenario.
    stdout = await new Promise<string>((resolve, reject) => {
      execFile(node!, [cli, 'server', '--url', url, '--suite', 'all', '--output-dir', outputDir], { timeout: 150_000, maxBuffer: 16 * 1024 * 1024 }, (error, out) => {
        // Killed (the timeout) or not started: no exit code, no results to judge.
        if (error && typeof error.code !== 'number') reject(new Error(`The conformance suite did not finish: ${error.message}`, { cause: error }));
        else resolve(out);
      });
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
    (results.get(scenario) ?? []).filter((check) => check.status === status).map((check) => `${check.id}: ${check.errorMessage ?? check.description}`);

  it('ran every scenario it has, each of them expected to pass or listed with why it does not', () => {
    expect([...results.keys()].sort()).toEqual([...PASSES, ...Object.keys(DOES_NOT_PASS)].sort());
  });

  it.each(PASSES)('passes %s', (scenario) => {
    expect(shown(scenario, 'FAILURE')).toEqual([]);
    expect(shown(scenario, 'SUCCESS').length).toBeGreaterThan(0);
  });

  it.each(Object.entries(DOES_NOT_PASS).map(([scenario, { why }]) => [scenario, why] as const))('does not pass %s: %s', (scenario) => {
    expect(shown(scenario, 'SUCCESS')).toEqual([]);
    const failures = shown(scenario, 'FAILURE');
    const findings = failures.length > 0 ? failures : shown(scenario, 'WARNING');
    expect(findings.length).toBeGreaterThan(0);
    for (const finding of findings) expect(finding).toMatch(DOES_NOT_PASS[scenario].shows);
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
      ]),
    );
    const audited = async (tool: string) =>
      ((await t.http.get(`/v1/projects/${project}/invocations`).query({ tool, limit: 100 }).set(tenantAuth).expect(200)).body.items as Array<{ status: string; channel: string; arguments: { source: string } }>).filter(
        (row) => row.status === 'ok' && row.channel === 'mcp' && row.arguments.source.startsWith('skill:conformance'),
      );
    expect((await audited('resources/read')).length).toBeGreaterThanOrEqual(3);
    expect((await audited('prompts/get')).length).toBeGreaterThanOrEqual(4);
  });

  it('relayed the upstream tools’ calls: the fixtures ran on the upstream server', () => {
    expect(new Set(upstream.calls)).toEqual(
      new Set(['test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource', 'test_multiple_content_types', 'test_tool_with_progress', 'test_tool_with_logging', 'test_error_handling']),
    );
  });
});
