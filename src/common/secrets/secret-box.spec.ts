import { randomBytes } from 'node:crypto';
import { isSealed, SecretBox, SecretBoxError } from './secret-box.js';

describe('SecretBox', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('seals a value that only the key opens, with a fresh nonce each time', () => {
    const box = new SecretBox(newKey);
    const a = box.seal('tgs_secret');
    const b = box.seal('tgs_secret');
    expect(isSealed(a)).toBe(true);
    expect(a).not.toContain('tgs_secret');
    expect(a).not.toBe(b);
    expect(box.open(a)).toBe('tgs_secret');
    expect(box.open(b)).toBe('tgs_secret');
    expect(() => new SecretBox(oldKey).open(a)).toThrow(/no key with id/);
  });

  it('seals off the event loop (sealAsync) in the same form: open reads it, a changed byte does not authenticate', async () => {
    const box = new SecretBox(newKey);
    const plain = `{"content":"${'é'.repeat(100_000)}"}`;
    const sealed = await box.sealAsync(plain);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toBe(await box.sealAsync(plain));
    expect(box.open(sealed)).toBe(plain);
    const flipped = sealed.slice(0, -2) + (sealed.endsWith('AA') ? 'AB' : 'AA');
    expect(() => box.open(flipped)).toThrow(SecretBoxError);
  });

  it('opens values of a previous key after rotation, and says they need resealing', () => {
    const before = new SecretBox(oldKey).seal('header-value');
    const rotated = new SecretBox(newKey, [oldKey]);
    expect(rotated.open(before)).toBe('header-value');
    expect(rotated.needsResealing(before)).toBe(true);
    expect(rotated.needsResealing(rotated.seal('x'))).toBe(false);
    expect(rotated.needsResealing('stored in clear')).toBe(true);
    expect(rotated.openOrPlain('stored in clear')).toBe('stored in clear');
  });

  it('refuses a value that was tampered with, truncated or not sealed', () => {
    const box = new SecretBox(newKey);
    const sealed = box.seal('value');
    // The next-to-last character changes (checking the last one instead left it as it was one time in 64).
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.slice(-1);
    expect(() => box.open(flipped)).toThrow(SecretBoxError);
    expect(() => box.open(sealed.slice(0, sealed.lastIndexOf(':') + 4))).toThrow(/truncated/);
    expect(() => box.open('plain')).toThrow(/not sealed/);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});
