import { deserialize, serialize } from 'node:v8';

// Messages between the service and its command launcher (command-launcher.ts), over the launcher's stdin and
// stdout: each a 4-byte big-endian length, then the message as V8 writes it (so output travels as bytes).

export function frame(message: unknown): Buffer {
  const body = serialize(message);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

// Gathers the chunks a pipe gives into whole messages, in order.
export class FrameReader {
  private pending: Buffer[] = [];
  private size = 0;

  constructor(private readonly onMessage: (message: unknown) => void) {}

  push(chunk: Buffer): void {
    this.pending.push(chunk);
    this.size += chunk.length;
    while (this.size >= 4) {
      const head = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.size);
      const length = head.readUInt32BE(0);
      if (this.size < 4 + length) {
        this.pending = [head];
        return;
      }
      const body = head.subarray(4, 4 + length);
      const rest = head.subarray(4 + length);
      this.pending = rest.length > 0 ? [rest] : [];
      this.size = rest.length;
      this.onMessage(deserialize(body));
    }
  }
}
