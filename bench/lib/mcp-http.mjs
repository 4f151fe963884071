import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { defer } from './cleanup.mjs';
import { BENCH_FILE_CONTENT } from './fixtures.mjs';
import { freePort, spawnLogged, waitUntilReady, watchMemory } from './processes.mjs';
import { REPO_ROOT } from './toolgate.mjs';

// An MCP client as users run it: the SDK Client over Streamable HTTP (fetch, keep-alive connections).
// The transport passes its one AbortSignal to every fetch, and Node's fetch leaves an abort listener on it
// per request until that request is garbage-collected: at thousands of calls a second more than 1500 pile
// up between collections and Node prints a MaxListenersExceededWarning for each one past that. Each fetch
// gets its own signal that follows the transport's (AbortSignal.any, which the source holds weakly), so
// the listeners go with each request and closing the client still aborts what is in flight.
export async function connectMcpHttp(url, headers = {}) {
  const client = new Client({ name: 'toolgate-bench', version: '1.0.0' });
  const fetchOwnSignal = (input, init) => fetch(input, init?.signal ? { ...init, signal: AbortSignal.any([init.signal]) } : init);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch: fetchOwnSignal }));
  const undefer = defer(`close the MCP client of ${url}`, () => client.close());
  return {
    client,
    async close() {
      undefer();
      await client.close();
    },
  };
}

// The bare SDK server (bench/mcp-http-server.mjs) as a child process, serving files under `root`.
export async function startMcpHttpServer({ label, root, logFile }) {
  const port = await freePort();
  const proc = spawnLogged(label, process.execPath, [path.join(REPO_ROOT, 'bench', 'mcp-http-server.mjs')], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), MCP_ROOT: root },
    cwd: REPO_ROOT,
    logFile,
  });
  const memory = watchMemory(proc.pid);
  const base = `http://127.0.0.1:${port}`;
  await waitUntilReady(proc, async () => (await fetch(`${base}/health`)).ok, { label, timeoutMs: 15_000 });
  return {
    label,
    pid: proc.pid,
    proc,
    memory,
    url: `${base}/mcp`,
    async stop() {
      const snapshot = memory.snapshot();
      await proc.stop();
      memory.stop();
      return snapshot;
    },
  };
}

// The text of read_file's answer of the 1 KiB bench file, as both servers put it: the JSON result, whose
// `content` is the file.
const fileOf = (result) => {
  try {
    return JSON.parse(result?.content?.[0]?.text ?? 'null')?.content ?? null;
  } catch {
    return null;
  }
};

// One read_file of the bench file, checked in full before anything is timed, on a client of its own that
// first lists the tools (so the SDK client also checks structuredContent against the declared output
// schema). Returns the answer's text length, which every timed answer must then have.
export async function checkMcpRead(label, url, headers, file) {
  const { client, close } = await connectMcpHttp(url, headers);
  try {
    const { tools } = await client.listTools();
    if (!tools.some((t) => t.name === 'read_file'))
      throw new Error(`${label} lists no read_file tool (tools: ${tools.map((t) => t.name).join(', ')})`);
    const answer = await client.callTool({ name: 'read_file', arguments: { path: file } });
    const ok = answer.isError !== true && fileOf(answer) === BENCH_FILE_CONTENT && answer.structuredContent?.content === BENCH_FILE_CONTENT;
    if (!ok) throw new Error(`${label} read_file over MCP answered ${JSON.stringify(answer).slice(0, 400)}`);
    return answer.content[0].text.length;
  } finally {
    await close();
  }
}

// The closed-loop call and its check, for bench/lib/load.mjs closedLoop: an error result, a JSON-RPC error
// or an answer of another length is an unexpected answer.
export function mcpReadLoad(client, file, textLength) {
  return {
    call: () => client.callTool({ name: 'read_file', arguments: { path: file } }),
    isExpected: (result) => result?.isError !== true && result?.content?.[0]?.text?.length === textLength,
  };
}

// The same tools/call as the SDK client sends it (its headers, one JSON-RPC request per POST), for
// autocannon: the endpoint measured with the load generator the REST figures use, so the two set the
// server's own cost side by side without the SDK client's.
export function mcpRawRead(url, headers, file) {
  return {
    url,
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION, ...headers },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: { path: file } } },
    expectStatus: 200,
    checkBody: (body) => body.includes('"structuredContent"') && body.includes('line 16') && !body.includes('"isError":true'),
  };
}

// One raw call checked in full before it is timed.
export async function checkMcpRawRead(label, load) {
  const response = await fetch(load.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...load.headers },
    body: JSON.stringify(load.body),
  });
  const text = await response.text();
  let answer = null;
  try {
    answer = JSON.parse(text);
  } catch {
    // reported below
  }
  const result = answer?.result;
  const ok =
    response.status === 200 &&
    answer?.id === 1 &&
    result?.isError !== true &&
    result?.structuredContent?.content === BENCH_FILE_CONTENT &&
    fileOf(result) === BENCH_FILE_CONTENT;
  if (!ok || !load.checkBody(text)) throw new Error(`${label} answered a raw tools/call with ${response.status}: ${text.slice(0, 400)}`);
}
