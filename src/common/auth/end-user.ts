import { AppError } from '../errors/app-error.js';

// The header a call names its end user with: the person the agent acts for, whose connections its tools use.
export const END_USER_HEADER = 'toolgate-user';
export const END_USER_MAX_CHARS = 256;

// Control, format (bidi overrides, zero-width marks), surrogate, private-use and unassigned code points, and
// the line and paragraph separators: none of them belongs in a name a person or an audit reader looks at.
const NOT_PRINTABLE = /[\p{C}\p{Zl}\p{Zp}]/u;

export const userAssertionNotAllowed = () =>
  new AppError(
    403,
    'user_assertion_not_allowed',
    'This key may not name an end user: Toolgate-User is accepted only from keys made with actAsUsers: true',
  );
export const invalidEndUser = (why: string) =>
  new AppError(422, 'invalid_user', `The end user id is refused: ${why}. It must be 1-${END_USER_MAX_CHARS} printable characters`);

// A header value as Node gives it (each byte a latin-1 character), read as the UTF-8 it was sent in.
export function parseEndUser(raw: string): string {
  const value = Buffer.from(raw, 'latin1').toString('utf8');
  if (value.includes('\uFFFD')) throw invalidEndUser('it is not valid UTF-8');
  return checkEndUser(value);
}

// An id given in a body (the same rules as the header).
export function checkEndUser(value: string): string {
  const chars = [...value].length;
  if (chars === 0 || value.trim() === '') throw invalidEndUser('it is empty');
  if (chars > END_USER_MAX_CHARS) throw invalidEndUser(`it is ${chars} characters long`);
  if (NOT_PRINTABLE.test(value)) throw invalidEndUser('it holds control, bidi or other non-printable characters');
  return value;
}
