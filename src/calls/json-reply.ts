// A JSON answer whose status and headers the handler decides (200 or 202, Idempotent-Replayed), sent
// through the adapter's own JSON send on Express and Fastify alike.
export interface JsonReply {
  send(status: number, headers: Record<string, string>, body: unknown): void;
}

export interface ExpressLikeResponse {
  status(code: number): ExpressLikeResponse;
  setHeader(name: string, value: string): void;
  json(body: unknown): unknown;
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
        response.send(body);
        return;
      }
      response.status(status);
      for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
      response.json(body);
    },
  };
}
