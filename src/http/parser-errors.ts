import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';

// Node's HTTP parser refuses some requests (headers over 16 KiB, malformed requests) before any
// framework code runs; answer those in the one error shape too instead of a bare status line.
export function answerParserError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) return void socket.destroy();
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const [status, text, code, message] = tooLarge
    ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request line or headers are larger than 16 KiB']
    : [400, 'Bad Request', 'bad_request', 'The request could not be parsed as HTTP'];
  const body = JSON.stringify({ error: { code, message }, requestId: randomUUID() });
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
