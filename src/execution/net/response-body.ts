import type { IncomingMessage } from 'node:http';
import { TextDecoder } from 'node:util';
import { cancelled, networkError } from './fetch-errors.js';

export interface EncodedBody {
  body: string;
  bodyEncoding: 'utf8' | 'base64';
}

// Media types whose bytes are text; everything else goes back as base64.
const TEXT_TYPES = new RegExp(
  '^(text/[^;]+|image/svg\\+xml|application/(json|[^;]*\\+json|xml|[^;]*\\+xml|javascript|ecmascript|' +
    'x-www-form-urlencoded|yaml|x-yaml|toml|graphql|sql|x-sh))\\s*(;|$)',
  'i',
);

function decoderFor(contentType: string): TextDecoder {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}

// Without a content type, bytes that decode as UTF-8 and hold no NUL are treated as text. `stream: true`
// tolerates a character cut in half by the byte cap.
function looksLikeUtf8(bytes: Buffer): boolean {
  if (bytes.subarray(0, 4096).includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

export function encodeBody(bytes: Buffer, contentType: string | undefined): EncodedBody {
  const type = contentType?.trim() ?? '';
  if (TEXT_TYPES.test(type)) return { body: decoderFor(type).decode(bytes), bodyEncoding: 'utf8' };
  if (type === '' && looksLikeUtf8(bytes)) return { body: bytes.toString('utf8'), bodyEncoding: 'utf8' };
  return { body: bytes.toString('base64'), bodyEncoding: 'base64' };
}

export interface BodyRead {
  bytes: Buffer;
  truncated: boolean;
  timedOut: boolean;
}

// Reads at most maxBytes, then closes the connection: the rest of a huge or endless body is never pulled in.
export function readBody(
  res: IncomingMessage,
  url: URL,
  maxBytes: number,
  signal: AbortSignal,
  isDeadline: (reason: unknown) => boolean,
): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (outcome: BodyRead | Error) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (outcome instanceof Error || outcome.truncated) res.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const partial = (byDeadline: boolean): BodyRead => ({
      bytes: Buffer.concat(chunks, size),
      truncated: true,
      timedOut: byDeadline,
    });
    // A drip that reaches the deadline after the headers came back is returned as far as it got, marked
    // truncated and timedOut: a partial page serves a model better than an error, and the cut is explicit.
    const onAbort = () => settle(isDeadline(signal.reason) ? partial(true) : cancelled());
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      if (settled) return;
      const room = maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        return settle(partial(false));
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    res.on('end', () => settle({ bytes: Buffer.concat(chunks, size), truncated: false, timedOut: false }));
    res.on('error', (err: NodeJS.ErrnoException) => settle(networkError(url, err, size)));
  });
}
