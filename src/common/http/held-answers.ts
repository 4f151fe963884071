import type { Socket } from 'node:net';

// Bytes of an answer its route holds in memory and has not yet handed to the connection: a batch's results,
// handed over one at a time as the client reads (JsonReply.sendPieces). What waits in the connection's own
// write buffer is `socket.writableLength`; together they are what the client has not read yet.
interface Held {
  bytes: number;
  // socket.bytesWritten when the answer started: what has been handed over since is no longer held here.
  handedBefore: number;
}

const held = new WeakMap<Socket, Held>();

// Until `released` is called (the response closed), the bytes not yet handed to `socket` count as held.
export function holdAnswer(socket: Socket, bytes: number): () => void {
  const entry = { bytes, handedBefore: socket.bytesWritten };
  held.set(socket, entry);
  return () => {
    if (held.get(socket) === entry) held.delete(socket);
  };
}

// The answer bytes waiting for the client on `socket`: in its write buffer, and those its route still holds.
export function unreadBytes(socket: Socket): number {
  const entry = held.get(socket);
  const notHanded = entry ? Math.max(0, entry.bytes - (socket.bytesWritten - entry.handedBefore)) : 0;
  return socket.writableLength + notHanded;
}
