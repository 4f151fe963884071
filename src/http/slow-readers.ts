import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface SlowReaderFloor {
  // A connection with an answer waiting to be sent must take at least this many bytes a second, on
  // average over `windowMs`, or it is closed.
  bytesPerSecond: number;
  windowMs: number;
}

// A client that reads its answer a few bytes a second keeps that answer in the service's memory for as
// long as it likes (a 9 MiB answer at 16 B/s: days). Every connection with bytes still buffered for it is
// looked at once per window; one that took less than the floor since the last look is reset, and its
// buffers (the service's and the kernel's) freed with it. A connection with nothing waiting is never judged, however quiet it is.
export function closeSlowReaders(server: Server, floor: SlowReaderFloor): void {
  const watched = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    socket.once('close', () => watched.delete(socket));
    watched.set(socket, -1);
  });
  const minimum = Math.ceil((floor.bytesPerSecond * floor.windowMs) / 1000);
  const timer = setInterval(() => {
    for (const [socket, before] of watched) {
      if (socket.destroyed) {
        watched.delete(socket);
        continue;
      }
      // Nothing waiting: nothing to judge, and the next wait starts a fresh window.
      if (socket.writableLength === 0) {
        watched.set(socket, -1);
        continue;
      }
      // bytesWritten counts what is still buffered too: what has left is the rest.
      const sent = socket.bytesWritten - socket.writableLength;
      if (before >= 0 && sent - before < minimum) {
        // A reset, not a FIN: a FIN would queue behind the unsent bytes the kernel still holds for it.
        socket.resetAndDestroy();
        watched.delete(socket);
        continue;
      }
      watched.set(socket, sent);
    }
  }, floor.windowMs);
  timer.unref();
  server.once('close', () => clearInterval(timer));
}
