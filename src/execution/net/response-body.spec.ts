import { encodeBody } from './response-body.js';

describe('encodeBody', () => {
  it('decodes text types as UTF-8', () => {
    expect(encodeBody(Buffer.from('héllo'), 'text/plain; charset=utf-8')).toEqual({ body: 'héllo', bodyEncoding: 'utf8' });
    expect(encodeBody(Buffer.from('{"a":1}'), 'application/problem+json')).toEqual({ body: '{"a":1}', bodyEncoding: 'utf8' });
  });

  it('honours a declared charset', () => {
    expect(encodeBody(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'text/html; charset=ISO-8859-1').body).toBe('café');
  });

  it('returns binary types as base64', () => {
    const bytes = Buffer.from([0, 1, 2, 255]);
    expect(encodeBody(bytes, 'image/png')).toEqual({ body: bytes.toString('base64'), bodyEncoding: 'base64' });
  });

  it('sniffs an untyped body: UTF-8 text stays text, anything else is base64', () => {
    expect(encodeBody(Buffer.from('plain'), undefined).bodyEncoding).toBe('utf8');
    expect(encodeBody(Buffer.from([0xff, 0xfe, 0x00]), undefined).bodyEncoding).toBe('base64');
  });

  it('keeps an untyped UTF-8 body as text when the byte cap split its last character', () => {
    expect(encodeBody(Buffer.from('ab€').subarray(0, 4), undefined).bodyEncoding).toBe('utf8');
  });
});
