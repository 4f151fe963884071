import { bytesOfEscapedName, nameFromBytes, namesOfPath, realSegmentsOf } from './workspace-name.codec.js';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

describe('names that are not UTF-8', () => {
  it('leaves a UTF-8 name as it is, % included', () => {
    expect(nameFromBytes(Buffer.from('50% off é.txt'))).toEqual({ text: '50% off é.txt', raw: '50% off é.txt', escaped: false });
  });

  it('escapes each byte outside valid UTF-8 as %XX and each % as %25, keeping valid sequences', () => {
    const name = bytes('bad', [0xff], '%é', [0xe2, 0x82], '.txt', [0xc0, 0xaf]);
    expect(nameFromBytes(name)).toEqual({ text: 'bad%FF%25é%E2%82.txt%C0%AF', raw: name, escaped: true });
    // Surrogates and overlong forms are not UTF-8; a 4-byte character next to a bad byte is kept.
    expect(nameFromBytes(bytes([0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98, 0x80], [0x80])).text).toBe('%ED%A0%80😀%80');
  });

  it('decodes only the escaped form a listing writes, and only to bytes that are not UTF-8', () => {
    expect(bytesOfEscapedName('bad%FF%25é%E2%82.txt%C0%AF')).toEqual(bytes('bad', [0xff], '%é', [0xe2, 0x82], '.txt', [0xc0, 0xaf]));
    // UTF-8 results: never a second spelling of an ordinary name, of '..' or of a name with '/'.
    for (const segment of ['a%41', '%2E%2E', 'a%2Fb', 'plain', '%25', '%00%FF']) expect(bytesOfEscapedName(segment)).toBeNull();
    // Not the listing's form: lowercase hex, an unescaped %, a character escaped that needs none.
    for (const segment of ['bad%ff', '50%%FF', '%FF%', '%61%FF']) expect(bytesOfEscapedName(segment)).toBeNull();
  });

  it('round-trips every single byte and every pair of bytes that is not UTF-8', () => {
    let checked = 0;
    const wrong: string[] = [];
    for (let a = 0; a < 256; a++) {
      for (let b = -1; b < 256; b++) {
        const name = Buffer.from(b < 0 ? [a] : [a, b]);
        if (name.includes(0x2f) || name.includes(0)) continue;
        const { text, escaped } = nameFromBytes(name);
        const back = bytesOfEscapedName(text);
        if (escaped ? !back?.equals(name) : back !== null) wrong.push(name.toString('hex'));
        checked++;
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(60000);
  });

  it('splits a path as bytes and places it below the root exactly', () => {
    expect(namesOfPath(bytes('a/', [0xff], '/')).map((n) => n.text)).toEqual(['a', '%FF', '']);
    expect(realSegmentsOf('/ws', bytes('/ws/d', [0xff], '/x'))).toEqual({ segments: ['d%FF', 'x'], raw: 'x' });
    expect(realSegmentsOf('/ws', bytes('/ws/d', [0xff]))).toEqual({ segments: ['d%FF'], raw: bytes('d', [0xff]) });
    // A root whose name holds U+FFFD is not matched by a bad byte that Node would decode to it.
    expect(realSegmentsOf('/w\ufffd', bytes('/w', [0xff], '/x'))).toBeNull();
    expect(realSegmentsOf('/ws', bytes('/other', [0xff]))).toBeNull();
  });
});
