import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';

const ANSWERS: Record<string, readonly [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request line or headers are larger than 16 KiB'],
  // HTTP_HEADERS_TIMEOUT_MS or HTTP_REQUEST_TIMEOUT_MS passed (request-timeouts.ts).
  ERR_HTTP_REQUEST_TIMEOUT: [
    408,
    'Request Timeout',
    'request_timeout',
    'The request did not arrive in time: send the headers, then the whole body, without pausing; the connection is closed',
  ],
};
const BAD_REQUEST = [400, 'Bad Request', 'bad_request', 'The request could not be parsed as HTTP'] as const;

// Node's HTTP server refuses some requests (headers over 16 KiB, malformed requests, a client too slow to
// send its request) before any framework code runs, or while a handler still waits for the body; answer
// those in the one error shape too instead of a bare status line, then close the connection. Once an
// answer has begun, nothing can be added to it: the connection is only closed.
export function answerParserError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) return void socket.destroy();
  const [status, text, code, message] = ANSWERS[error.code ?? ''] ?? BAD_REQUEST;
  const body = JSON.stringify({ error: { code, message }, requestId: randomUUID() });
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    // A handler may still be waiting for the rest of the body: the connection goes once the answer is out.
    () => socket.destroy(),
  );
}
