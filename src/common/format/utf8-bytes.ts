const encoder = new TextEncoder();

// A text's UTF-8 bytes, as a Buffer over the encoder's own array (no second copy). On Node 20,
// Buffer.from(text) (and Express's send of a string, which calls it) encodes a large ASCII text several times
// slower than TextEncoder: 0.5 ms against 0.08 ms for 256 KiB, measured. For a text already written (a cached
// listing); an answer being written goes straight into its buffer (writeJsonBytes).
export function utf8Bytes(text: string): Buffer {
  const bytes = encoder.encode(text);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
