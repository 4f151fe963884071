import type { Server } from 'node:http';
import type { Socket } from 'node:net';

// server.close() stops listening, closes the idle keep-alive connections and waits for the others. To Node,
// a connection that has not sent a request yet (a browser's or proxy's pre-connect, an HTTP client's spare
// socket, a client that went quiet mid-headers) is not idle: it counts as a request in progress, so that
// headersTimeout applies to it. The service's shutdown then waited for each such client to close its socket
// or for HTTP_HEADERS_TIMEOUT_MS, 20 s by default. Such a connection holds no request to lose, so it is
// closed along with the idle ones; a connection that is answering a request is still waited for.
export function closeUnusedConnectionsWithIdleOnes(server: Server): void {
  const unused = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  server.on('request', (request: { socket: Socket }) => unused.delete(request.socket));
  // Both adapters close through here: Node's own server.close() calls it, and so does Fastify's close.
  const closeIdleConnections = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdleConnections();
    for (const socket of unused) socket.destroy();
    unused.clear();
  };
}
