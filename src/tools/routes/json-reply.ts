import { Readable, type Writable, pipeline } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import { holdAnswer } from '../../common/http/held-answers.js';
import { writeJsonBytes } from '../../common/json/json-text.js';

// A JSON answer whose status and headers the handler decides (200 or 202, Idempotent-Replayed), written
// here as UTF-8 bytes (writeJsonBytes: a result already written as JSON text goes in as it is) and sent
// with the content type JSON answers have.
export interface JsonReply {
  send(status: number, headers: Record<string, string>, body: unknown): void;
  // An answer already written as UTF-8 pieces that make one JSON text in order (a batch's results), sent one
  // piece at a time, as the client reads them.
  sendPieces(status: number, headers: Record<string, string>, pieces: readonly Buffer[]): void;
}

export interface ExpressLikeResponse {
  status(code: number): ExpressLikeResponse;
  setHeader(name: string, value: string): void;
  getHeader(name: string): unknown;
  send(body: Buffer): unknown;
}

export interface FastifyLikeReply {
  raw: unknown;
  code(status: number): FastifyLikeReply;
  header(name: string, value: string): FastifyLikeReply;
  send(body: unknown): unknown;
}

// `response` is what @Res() gives the handler (which then owns sending the answer).
export function jsonReply(response: ExpressLikeResponse | FastifyLikeReply): JsonReply {
  const head = (status: number, headers: Record<string, string>) => {
    if ('raw' in response) {
      response.code(status);
      for (const [name, value] of Object.entries(headers)) response.header(name, value);
      response.header('content-type', 'application/json; charset=utf-8');
      return;
    }
    response.status(status);
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    // As Express's res.json answers.
    if (!response.getHeader('content-type')) response.setHeader('content-type', 'application/json; charset=utf-8');
  };
  return {
    send(status, headers, body) {
      head(status, headers);
      // Bytes, not a text: Express would encode a text with Buffer.from, several times slower (utf8-bytes.ts).
      response.send(writeJsonBytes(body));
    },
    sendPieces(status, headers, pieces) {
      const length = pieces.reduce((sum, piece) => sum + piece.length, 0);
      head(status, { ...headers, 'content-length': String(length) });
      // Counted as the tenant's unread answer until the response closes (src/budgets/unread-answers.ts).
      const raw = ('raw' in response ? response.raw : response) as ServerResponse;
      if (raw.socket) raw.once('close', holdAnswer(raw.socket, length));
      if ('raw' in response) {
        response.send(Readable.from(onePerTurn(pieces)));
        return;
      }
      // Express's response is Node's own: the pieces are piped in, and a client that goes away ends the stream.
      response.setHeader('content-type', 'application/json; charset=utf-8');
      pipeline(Readable.from(onePerTurn(pieces)), response as unknown as Writable, () => {});
    },
  };
}

// One piece per turn of the event loop: an answer of many megabytes is never encoded or copied into the
// socket in one go, so other tenants' requests are served between its pieces. The stream pulls the next
// piece only when the client has taken the ones before (backpressure).
async function* onePerTurn(pieces: readonly Buffer[]): AsyncGenerator<Buffer> {
  for (const [index, piece] of pieces.entries()) {
    if (index > 0) await nextTurn();
    yield piece;
  }
}
