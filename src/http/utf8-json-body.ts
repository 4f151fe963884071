import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { INVALID_UTF8_BODY } from '../common/errors/all-exceptions.filter.js';

// JSON is UTF-8 (RFC 8259, 8.1). Both adapters' parsers would decode invalid bytes to U+FFFD without a word,
// so a name with a stray byte would silently become another name (in a file path, say). The bytes are
// checked before they are decoded and such a body answers 400 invalid_json.
const invalidUtf8 = () =>
  Object.assign(new Error('The request body is not valid UTF-8'), { status: 400, statusCode: 400, type: INVALID_UTF8_BODY });

// body-parser's `verify`: called with the raw bytes before they are decoded. Another declared charset
// (body-parser's json takes the utf-* ones) is decoded by its own rules.
export function verifyUtf8Body(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding.toLowerCase().replace('-', '') === 'utf8' && !isUtf8(body)) throw invalidUtf8();
}

// Fastify's JSON parser, given the bytes instead of a string it decoded itself.
export function useUtf8JsonParser(fastify: FastifyInstance): void {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (!isUtf8(body as Buffer)) return done(invalidUtf8(), undefined);
    void parse(request, (body as Buffer).toString('utf8'), done);
  });
}
