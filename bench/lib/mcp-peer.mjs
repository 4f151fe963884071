import { closeSync, openSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { defer, trackPid } from './cleanup.mjs';
import { watchMemory } from './processes.mjs';

const require = createRequire(import.meta.url);

// The installed server's own bin entry, run with this node (no npx, no PATH lookup).
function serverBin() {
  const manifestPath = require.resolve('@modelcontextprotocol/server-filesystem/package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin)[0];
  return { path: path.join(path.dirname(manifestPath), bin), version: manifest.version };
}

// The MCP filesystem server over stdio, driven by the SDK client: the peer Toolgate is compared with.
export async function startMcpPeer({ allowedDir, logFile }) {
  const bin = serverBin();
  const fd = openSync(logFile, 'a');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin.path, allowedDir],
    env: getDefaultEnvironment(),
    stderr: fd,
    cwd: allowedDir,
  });
  const client = new Client({ name: 'toolgate-bench', version: '1.0.0' });
  const undefer = defer('stop the MCP filesystem server', () => client.close());
  await client.connect(transport);
  closeSync(fd);
  const pid = transport.pid;
  const untrack = trackPid(pid);
  const memory = watchMemory(pid);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  // Newer releases call it read_text_file (read_file stays as a deprecated alias).
  const readTool = names.includes('read_text_file') ? 'read_text_file' : 'read_file';
  if (!names.includes(readTool)) throw new Error(`the MCP filesystem server ${bin.version} has no read tool (tools: ${names.join(', ')})`);
  return {
    label: `MCP filesystem server ${bin.version} (stdio)`,
    client,
    pid,
    readTool,
    toolCount: tools.length,
    version: bin.version,
    memory,
    async stop() {
      undefer();
      const snapshot = memory.snapshot();
      await client.close();
      memory.stop();
      untrack();
      return snapshot;
    },
  };
}
