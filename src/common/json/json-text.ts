import { randomBytes } from 'node:crypto';

// A result already written as JSON text, with what the result caps need to know of it. A big recursive
// listing is written on the worker thread that walked it and crosses to the main thread as one string:
// the main thread then builds no object per entry, walks none for the caps and serialises none again
// (docs/architecture.md, "Results written as JSON text").
//
// Anywhere it is serialised it reads as the value the text holds: JSON.stringify calls toJSON, which parses
// the text, so a writer that does not know this class (Prisma's jsonb, a batch answer) still writes the
// same JSON. writeJson, used where answers are written, splices the text in as it is instead. The instance
// has no enumerable properties, so code that walks results (the toolset renames) sees nothing to change.
export class JsonText {
  // Null for a result too large to have been written (oversized).
  readonly #text: string | null;
  readonly #bytes: number;
  readonly #depth: number;

  private constructor(text: string | null, { bytes, depth }: { bytes: number; depth: number }) {
    this.#text = text;
    this.#bytes = bytes;
    this.#depth = depth;
  }

  // `bytes`: UTF-8 length of `text`; `depth`: how deeply it nests (bounded-json's count: the outermost
  // container is level 1). The producer knows both; they are not checked here.
  static written(text: string, counts: { bytes: number; depth: number }): JsonText {
    return new JsonText(text, counts);
  }

  // A result whose text was not written because it is known to be more than `atLeastBytes` bytes, past the
  // cap on results: the caps drop it (measureJson sees its size), so no answer ever writes it; one that
  // tried would fail, not write something else.
  static oversized(atLeastBytes: number, depth: number): JsonText {
    return new JsonText(null, { bytes: atLeastBytes, depth });
  }

  get text(): string {
    if (this.#text === null) throw new Error('A result past the cap on results was not written and cannot be answered');
    return this.#text;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get depth(): number {
    return this.#depth;
  }

  // Whether the text is a JSON object (MCP carries such a result as structuredContent as it is).
  get isObject(): boolean {
    return this.text.charCodeAt(0) === 0x7b; // '{'
  }

  toJSON(): unknown {
    return splicing ? splicing.hold(this.text) : JSON.parse(this.text);
  }
}

// While writeJson runs (JSON.stringify is synchronous, so one at a time), each JsonText it meets writes a
// marker string in its place, remembered with the text it stands for. A marker carries a random nonce made
// at start-up: no string a tenant or a tool writes can be taken for one without knowing it.
const NONCE = randomBytes(16).toString('hex');

class Splice {
  readonly texts: string[] = [];

  hold(text: string): string {
    this.texts.push(text);
    return marker(this.texts.length - 1);
  }
}

// How the marker appears in the JSON text, quotes included.
const marker = (index: number) => `\u0000${NONCE}:${index}`;
const writtenMarker = (index: number) => JSON.stringify(marker(index));

let splicing: Splice | null = null;

// JSON.stringify(value), with every JsonText inside written as its text rather than parsed and written again.
export function writeJson(value: unknown): string {
  const pieces = jsonPieces(value);
  // join writes one flat string: a text built with += is a rope that every later reader (an encoder, a
  // search) must first copy flat, slowly.
  return pieces.length === 1 ? pieces[0] : pieces.join('');
}

// The UTF-8 bytes of writeJson(value), written piece by piece into one buffer: no string of the whole answer
// is ever built, and nothing is copied twice. An answer of many MiB costs one pass over its bytes.
export function writeJsonBytes(value: unknown): Buffer {
  const pieces = jsonPieces(value);
  let length = 0;
  for (const piece of pieces) length += Buffer.byteLength(piece);
  const bytes = Buffer.allocUnsafe(length);
  let at = 0;
  for (const piece of pieces) at += bytes.write(piece, at);
  return bytes;
}

// The pieces of the JSON text in order: what JSON.stringify wrote between the JsonTexts, and their texts.
function jsonPieces(value: unknown): string[] {
  const splice = new Splice();
  const outer = splicing;
  splicing = splice;
  let written: string | undefined;
  try {
    written = JSON.stringify(value);
  } finally {
    splicing = outer;
  }
  // JSON.stringify(undefined) is undefined; such an answer is written as null.
  if (written === undefined) return ['null'];
  if (splice.texts.length === 0) return [written];
  // The markers come in the order JSON.stringify met them, so each is searched for after the one before.
  const pieces: string[] = [];
  let from = 0;
  for (let i = 0; i < splice.texts.length; i++) {
    const mark = writtenMarker(i);
    const at = written.indexOf(mark, from);
    if (at === -1) throw new Error('writeJson lost the place of a JSON text it was splicing');
    pieces.push(written.slice(from, at), splice.texts[i]);
    from = at + mark.length;
  }
  pieces.push(written.slice(from));
  return pieces;
}
