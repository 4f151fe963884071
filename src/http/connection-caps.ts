import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientAddress } from '../common/http/client-address.js';

// Every open connection holds a file descriptor, and the process has a fixed number of them (RLIMIT_NOFILE):
// 24,000 idle sockets, no key needed, used up 20,000 of them, and with them the descriptors the database pool,
// the sandboxes' pipes and every new client needed, until the header timeout closed them and they came back.
// Past a cap in total, or per client address, a new connection is closed as soon as it is accepted: its
// descriptor is back at once, and the connections already open (and the service's own) go on.
export interface ConnectionCaps {
  total: number;
  // 0: no cap per address (behind a reverse proxy, every connection comes from the proxy's).
  perAddress: number;
  // A connection must send its first byte within this (HTTP_HEADERS_TIMEOUT_MS). Node times the headers of a
  // request once bytes of it arrive (and answers 408 when they are late); a connection that sends nothing at
  // all it kept open for good (still open after 25 s at a 1.5 s header timeout), a place under the caps held
  // forever.
  firstByteWithinMs: number;
}

export type ConnectionRefusal = 'total' | 'per_address';

// What the caps see, kept as plain numbers and read when /metrics is scraped.
export interface ConnectionCounts {
  readonly open: number;
  readonly refused: Readonly<Record<ConnectionRefusal, number>>;
}

export function capConnections(
  server: Server,
  caps: ConnectionCaps,
  onRefused: (reason: ConnectionRefusal, address: string) => void,
): ConnectionCounts {
  const perAddress = new Map<string, number>();
  const firstByteDeadline = new WeakMap<Socket, NodeJS.Timeout>();
  const counts = { open: 0, refused: { total: 0, per_address: 0 } };
  const started = (socket: Socket) => {
    clearTimeout(firstByteDeadline.get(socket));
    firstByteDeadline.delete(socket);
  };
  server.on('request', (request: { socket: Socket }) => started(request.socket));
  server.on('upgrade', (request: { socket: Socket }) => started(request.socket));
  server.on('connection', (socket: Socket) => {
    const address = clientAddress(socket.remoteAddress);
    const fromAddress = perAddress.get(address) ?? 0;
    const refusal: ConnectionRefusal | null =
      counts.open >= caps.total ? 'total' : caps.perAddress > 0 && fromAddress >= caps.perAddress ? 'per_address' : null;
    if (refusal) {
      socket.destroy();
      counts.refused[refusal]++;
      onRefused(refusal, address);
      return;
    }
    counts.open++;
    perAddress.set(address, fromAddress + 1);
    firstByteDeadline.set(
      socket,
      setTimeout(() => socket.bytesRead === 0 && socket.destroy(), caps.firstByteWithinMs),
    );
    socket.once('close', () => {
      started(socket);
      counts.open--;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
  return counts;
}
