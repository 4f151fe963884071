import { createCipheriv, createDecipheriv, createHash, randomBytes, webcrypto } from 'node:crypto';

// Secrets the service must use in clear (skill signing keys, upstream headers) rest in the database sealed
// with AES-256-GCM: `tgenc:v1:<key id>:<base64url of iv | tag | ciphertext>`. The key id, derived from the
// key itself, says which key opens a value, so keys can rotate: the current key seals, the previous ones
// still open, and a start-up pass re-seals what an old key (or none) sealed.

const PREFIX = 'tgenc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export const keyIdOf = (key: Buffer) => createHash('sha256').update('toolgate-secrets-key-id:').update(key).digest('hex').slice(0, 12);

export class SecretBox {
  readonly currentKeyId: string;
  private readonly keys: Map<string, Buffer>;
  private currentCryptoKey: Promise<webcrypto.CryptoKey> | undefined;

  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    for (const key of [current, ...previous]) {
      if (key.length !== 32) throw new SecretBoxError('a secrets key must be 32 bytes');
    }
    this.currentKeyId = keyIdOf(current);
    this.keys = new Map([...previous, current].map((key) => [keyIdOf(key), key]));
  }

  seal(plain: string): string {
    const key = this.keys.get(this.currentKeyId)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${this.currentKeyId}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
  }

  // The same sealing, with the encryption on libuv's thread pool (WebCrypto's jobs run there) instead of the
  // event loop: for large values, such as a parked call's arguments (a megabyte took tens of milliseconds
  // of the loop on a loaded host).
  async sealAsync(plain: string): Promise<string> {
    this.currentCryptoKey ??= webcrypto.subtle.importKey('raw', this.keys.get(this.currentKeyId)!, { name: 'AES-GCM' }, false, ['encrypt']);
    const iv = randomBytes(IV_BYTES);
    // WebCrypto answers ciphertext | tag; the sealed form is iv | tag | ciphertext.
    const out = Buffer.from(
      await webcrypto.subtle.encrypt(
        { name: 'AES-GCM', iv, tagLength: TAG_BYTES * 8 },
        await this.currentCryptoKey,
        Buffer.from(plain, 'utf8'),
      ),
    );
    const tag = out.subarray(out.length - TAG_BYTES);
    return `${PREFIX}${this.currentKeyId}:${Buffer.concat([iv, tag, out.subarray(0, out.length - TAG_BYTES)]).toString('base64url')}`;
  }

  open(value: string): string {
    const parsed = parse(value);
    if (!parsed) throw new SecretBoxError('the value is not sealed');
    const key = this.keys.get(parsed.keyId);
    if (!key) throw new SecretBoxError(`no key with id ${parsed.keyId} is configured (SECRETS_KEY, SECRETS_KEY_PREVIOUS)`);
    const bytes = Buffer.from(parsed.payload, 'base64url');
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('the sealed value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(`the value sealed with key ${parsed.keyId} does not authenticate`);
    }
  }

  // Plain text (a row from before encryption) or sealed with a key that is no longer the current one.
  needsResealing(value: string): boolean {
    return parse(value)?.keyId !== this.currentKeyId;
  }

  // Opens a sealed value; a plain one (stored before encryption existed) is returned as it is.
  openOrPlain(value: string): string {
    return isSealed(value) ? this.open(value) : value;
  }
}

export const isSealed = (value: string) => value.startsWith(PREFIX);

function parse(value: string): { keyId: string; payload: string } | undefined {
  if (!isSealed(value)) return undefined;
  const rest = value.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0) return undefined;
  return { keyId: rest.slice(0, colon), payload: rest.slice(colon + 1) };
}
