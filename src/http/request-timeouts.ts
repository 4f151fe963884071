import type { Server } from 'node:http';
import type { AppConfig } from '../config/app-config.js';

// A client that sends its headers or its body slowly holds a connection (and, on a busy port, a slot in
// the kernel's accept queue) for as long as it likes unless the server stops waiting. Node's own limits do
// it on both adapters: the request line and headers within headersTimeoutMs, the whole request within
// requestTimeoutMs (counted from its first byte; the answer, however long a tool runs, is not). A client
// past either gets 408 request_timeout (see parser-errors.ts) and its connection is closed.
export function applyRequestTimeouts(server: Server, transport: AppConfig['transport']): void {
  server.headersTimeout = transport.headersTimeoutMs;
  server.requestTimeout = transport.requestTimeoutMs;
  // Node looks for expired requests on this interval (30 s by default), so a client could hold on for that
  // much longer; read when the server starts listening (a property @types/node does not declare).
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(
    250,
    Math.min(1000, Math.floor(transport.headersTimeoutMs / 4)),
  );
}
