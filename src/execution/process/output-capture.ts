import { StringDecoder } from 'node:string_decoder';

// Keeps at most `maxBytes` of one stream and reports the first byte past the cap.
export class OutputCapture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.truncated) return;
    const room = this.maxBytes - this.size;
    if (chunk.length <= room) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return;
    }
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.size = this.maxBytes;
    this.truncated = true;
    this.onOverflow();
  }

  text(): string {
    const bytes = Buffer.concat(this.chunks, this.size);
    // write() without end() holds back a character the cap cut in half instead of emitting U+FFFD.
    return this.truncated ? new StringDecoder('utf8').write(bytes) : bytes.toString('utf8');
  }
}
