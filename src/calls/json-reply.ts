import { writeJson } from '../common/json/json-text.js';

// A JSON answer whose status and headers the handler decides (200 or 202, Idempotent-Replayed), written
// here (writeJson: a result already written as JSON text goes in as it is) and sent as text with the
// content type each adapter gives its own JSON answers.
export interface JsonReply {
  send(status: number, headers: Record<string, string>, body: unknown): void;
}

export interface ExpressLikeResponse {
  status(code: number): ExpressLikeResponse;
  setHeader(name: string, value: string): void;
  getHeader(name: string): unknown;
  send(body: string): unknown;
}

export interface FastifyLikeReply {
  raw: unknown;
  code(status: number): FastifyLikeReply;
  header(name: string, value: string): FastifyLikeReply;
  send(body: unknown): unknown;
}

// `response` is what @Res() gives the handler (which then owns sending the answer).
export function jsonReply(response: ExpressLikeResponse | FastifyLikeReply): JsonReply {
  return {
    send(status, headers, body) {
      if ('raw' in response) {
        response.code(status);
        for (const [name, value] of Object.entries(headers)) response.header(name, value);
        response.header('content-type', 'application/json; charset=utf-8');
        response.send(writeJson(body));
        return;
      }
      response.status(status);
      for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
      // As Express's res.json: its send adds the charset.
      if (!response.getHeader('content-type')) response.setHeader('content-type', 'application/json');
      response.send(writeJson(body));
    },
  };
}
