// Every ```sh session block of README.md and docs/ (and of the fixture pages beside this file) runs against
// one started service: the real app on a real port, embedded PGlite, the command sandbox on where
// bubblewrap works, WORKSPACE_ROOT a temporary directory. Each page gets a tenant of its own and one bash
// process for all its blocks in order; a command whose output has another shape than the page shows, or a
// command without an expectation that fails, fails the page's test (see doc-sessions.ts for the format).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { UPSTREAM_TOOLS, UpstreamMcpServer } from '../e2e/mcp/upstream-mcp-server.js';
import { sandboxSupport } from '../support/sandbox.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../support/test-app.js';
import {
  describeFailures,
  incompleteCommand,
  parseSessionPage,
  runSession,
  SessionFormatError,
  type SessionCommand,
} from './doc-sessions.js';

// A page's blocks together; a page that needs more is too long to read anyway.
const PAGE_TIMEOUT_MS = 60_000;

function markdownFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return markdownFiles(file);
      return entry.name.endsWith('.md') ? [file] : [];
    })
    .sort();
}

// Paths relative to the repository (Jest's working directory), as the failures name them.
const PAGES = ['README.md', ...markdownFiles('docs'), ...markdownFiles(path.join('test', 'docs', 'fixtures'))];

// What a page holds, read when the tests are collected: its commands, or why it breaks the format.
function readPage(page: string): { commands: SessionCommand[] } | { error: string } {
  try {
    const commands = parseSessionPage(readFileSync(page, 'utf8'));
    const incomplete = incompleteCommand(commands);
    if (incomplete) {
      const { command, problem } = incomplete;
      return {
        error: `${page}:${command.line}: the command is not whole on its own lines (end a line with \\ to continue it on the next):\n$ ${command.text}\n${problem}`,
      };
    }
    return { commands };
  } catch (error) {
    if (error instanceof SessionFormatError) return { error: `${page}:${error.line}: ${error.problem}` };
    throw error;
  }
}

// ECHO_URL: any request is answered 200 with what it was, its JSON body parsed (null when it has none or
// it is not JSON).
async function startEchoServer(): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: unknown = null;
      try {
        body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null;
      } catch {
        body = null;
      }
      const url = new URL(req.url ?? '/', 'http://echo');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('doc sessions', () => {
  let t: TestApp;
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  let upstream: UpstreamMcpServer;

  beforeAll(async () => {
    const tools = spawnSync('sh', ['-c', 'command -v curl && command -v jq'], { encoding: 'utf8' });
    if (tools.status !== 0)
      throw new Error(
        `The doc sessions need curl and jq on PATH (apt-get install curl jq); found only: ${tools.stdout.trim() || 'neither'}`,
      );
    echo = await startEchoServer();
    upstream = new UpstreamMcpServer(UPSTREAM_TOOLS.filter((tool) => tool.name === 'echo'));
    await upstream.start();
    // Both fixtures listen on loopback, which the fetch address policy refuses unless opened.
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${echo.port},127.0.0.1:${upstream.port}` } });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await echo?.close();
    await upstream?.stop();
  });

  for (const page of PAGES) {
    const read = readPage(page);
    if ('commands' in read && read.commands.length === 0) {
      it.skip(`${page} (no session blocks)`, () => undefined);
      continue;
    }
    it(
      page,
      async () => {
        if ('error' in read) throw new Error(`The page breaks the session format: ${read.error}`);
        const tenant = await t.createTenant();
        const cwd = await mkdtemp(path.join(os.tmpdir(), 'toolgate-doc-page-'));
        try {
          const run = await runSession(read.commands, {
            cwd,
            timeoutMs: PAGE_TIMEOUT_MS,
            env: {
              PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
              HOME: cwd,
              LANG: 'C.UTF-8',
              TOOLGATE_URL: `http://127.0.0.1:${t.port}`,
              TOOLGATE_KEY: tenant.key,
              ADMIN_TOKEN,
              ECHO_URL: echo.url,
              MCP_UPSTREAM_URL: upstream.url,
            },
          });
          const failure = describeFailures(page, run, PAGE_TIMEOUT_MS);
          if (failure === null) return;
          const sandboxNote = sandboxSupport.available
            ? ''
            : `\n\n(The command sandbox is off here: ${sandboxSupport.reason}. CI runs the pages with it on.)`;
          throw new Error(`${failure}${sandboxNote}`);
        } finally {
          await rm(cwd, { recursive: true, force: true });
        }
      },
      PAGE_TIMEOUT_MS + 30_000,
    );
  }
});
