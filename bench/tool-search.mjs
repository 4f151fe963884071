// Tool search: recall of search_tools over a catalog of 300+ real tool definitions, and what the tool list
// costs the model in tokens with and without search mode. The catalog is gathered when this runs: the
// tools/list answers of MCP server packages (dev dependencies, started over stdio, no network or credentials
// used), topped up with definitions written for this bench (tool-search-catalog.mjs). The queries are
// tool-search-queries.mjs. The index and the two tools of search mode are the service's own (dist/toolsets).
//
// Alone: `npm run build && node bench/tool-search.mjs`; in `npm run bench` it is the tool_search scenario.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { countTokens } from 'gpt-tokenizer';
import { WRITTEN_TOOLS } from './tool-search-catalog.mjs';
import { QUERIES } from './tool-search-queries.mjs';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = (name) => path.join(REPO_ROOT, 'node_modules', '.bin', name);

// Each server under the prefix its tools get in the catalog (a gateway namespaces them so).
// GitLab's server only checks that a token is configured; it is never used (nothing is called), and its API
// URL points at a closed loopback port.
const SERVERS = [
  { prefix: 'fs', bin: 'mcp-server-filesystem', args: (dir) => [dir] },
  { prefix: 'memory', bin: 'mcp-server-memory' },
  { prefix: 'everything', bin: 'mcp-server-everything', args: () => ['stdio'] },
  { prefix: 'thinking', bin: 'mcp-server-sequential-thinking' },
  { prefix: 'github', bin: 'mcp-server-github' },
  { prefix: 'chrome', bin: 'chrome-devtools-mcp' },
  { prefix: 'notion', bin: 'notion-mcp-server' },
  { prefix: 'circleci', bin: 'mcp-server-circleci' },
  { prefix: 'gitlab', bin: 'mcp-gitlab', env: { GITLAB_PERSONAL_ACCESS_TOKEN: 'not-used', GITLAB_API_URL: 'http://127.0.0.1:9/api/v4' } },
];

async function listTools(server, dir, home) {
  const transport = new StdioClientTransport({
    command: BIN(server.bin),
    args: server.args?.(dir) ?? [],
    env: { PATH: process.env.PATH ?? '', HOME: home, ...server.env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'toolgate-bench', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    return tools;
  } finally {
    await client.close();
  }
}

export async function gatherCatalog() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-tool-search-'));
  try {
    const catalog = [];
    const sources = [];
    for (const server of SERVERS) {
      const tools = await listTools(server, dir, dir);
      sources.push({ server: server.bin, tools: tools.length });
      for (const tool of tools) catalog.push({ ...tool, name: `${server.prefix}_${tool.name}` });
    }
    sources.push({ server: 'written for the bench', tools: WRITTEN_TOOLS.length });
    catalog.push(...WRITTEN_TOOLS);
    return { catalog, sources };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The catalog as the service holds tools: what a search-mode toolset selecting all of them ('@all') serves.
async function searchModeView(catalog) {
  const dist = (file) => import(pathToFileURL(path.join(REPO_ROOT, 'dist', file)).href);
  const { ToolsetView } = await dist('toolsets/toolset-view.js');
  const tools = catalog.map((tool) => ({
    executor: {
      definition: {
        name: tool.name,
        description: tool.description ?? '',
        inputSchema: tool.inputSchema,
        annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
        timeoutMs: 30_000,
        source: 'skill:bench@1',
      },
    },
    // Not called: the view reuses a tool's own validator when it shows the tool unchanged.
    validator: null,
  }));
  const record = {
    id: 'bench',
    tenantId: 'bench',
    projectId: 'bench',
    slug: 'bench',
    name: 'bench',
    mode: 'search',
    tools: [{ select: '@all' }],
  };
  return new ToolsetView(record, tools);
}

const openAiShape = (tool) => ({
  type: 'function',
  function: { name: tool.name, description: tool.description ?? '', parameters: tool.inputSchema },
});
const tokensOf = (tools) => countTokens(JSON.stringify(tools.map(openAiShape)));

export async function runToolSearch() {
  const started = performance.now();
  const { catalog, sources } = await gatherCatalog();
  const names = new Set(catalog.map((t) => t.name));
  const unknown = QUERIES.filter(([, expected]) => !names.has(expected)).map(([q, e]) => `${e} (${q})`);
  if (unknown.length > 0) throw new Error(`queries expect tools the catalog lacks: ${unknown.join(', ')}`);
  const view = await searchModeView(catalog);
  let at1 = 0;
  let at5 = 0;
  const misses = [];
  let answerTokens = 0;
  const searchStarted = performance.now();
  for (const [query, expected] of QUERIES) {
    const { tools } = await view.searchTools(query, 5);
    const rank = tools.findIndex((t) => t.name === expected);
    if (rank === 0) at1++;
    if (rank >= 0) at5++;
    else misses.push({ query, expected, got: tools.slice(0, 3).map((t) => t.name) });
    answerTokens += countTokens(JSON.stringify({ tools, total: tools.length }));
  }
  const searchMs = (performance.now() - searchStarted) / QUERIES.length;
  const fullTokens = tokensOf(catalog);
  const searchTokens = tokensOf(view.definitions);
  return {
    catalogTools: catalog.length,
    sources,
    queries: QUERIES.length,
    recallAt1: at1 / QUERIES.length,
    recallAt5: at5 / QUERIES.length,
    fullListTokens: fullTokens,
    searchListTokens: searchTokens,
    searchShare: searchTokens / fullTokens,
    meanSearchAnswerTokens: Math.round(answerTokens / QUERIES.length),
    meanSearchMs: searchMs,
    misses,
    seconds: (performance.now() - started) / 1000,
  };
}

export function renderToolSearch(r) {
  const pct = (x) => `${(x * 100).toFixed(1)}%`;
  const lines = [
    `## Tool search (search mode), ${r.catalogTools} tools, ${r.queries} queries`,
    '',
    `Catalog: ${r.sources.map((s) => `${s.server} ${s.tools}`).join(', ')}.`,
    '',
    '| Measure | Value | Target | Result |',
    '| --- | ---: | --- | --- |',
    `| recall@1 | ${r.recallAt1.toFixed(3)} | | |`,
    `| recall@5 | ${r.recallAt5.toFixed(3)} | >= 0.9 | ${r.recallAt5 >= 0.9 ? 'PASS' : 'FAIL'} |`,
    `| tool list tokens, every tool (OpenAI shape, gpt-tokenizer o200k) | ${r.fullListTokens.toLocaleString('en')} | | |`,
    `| tool list tokens, search mode (search_tools + call_tool) | ${r.searchListTokens.toLocaleString('en')} (${pct(r.searchShare)}) | <= 10% | ${r.searchShare <= 0.1 ? 'PASS' : 'FAIL'} |`,
    `| tokens of one search_tools answer (5 tools), mean | ${r.meanSearchAnswerTokens.toLocaleString('en')} | | |`,
    `| search time per query, mean | ${r.meanSearchMs.toFixed(2)} ms | | |`,
  ];
  if (r.misses.length > 0) {
    lines.push('', 'Missed at 5:');
    for (const m of r.misses) lines.push(`- "${m.query}": expected ${m.expected}, got ${m.got.join(', ') || 'nothing'}`);
  }
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await runToolSearch();
  process.stdout.write(`${renderToolSearch(result)}\n`);
  process.exitCode = result.recallAt5 >= 0.9 && result.searchShare <= 0.1 ? 0 : 1;
}
