import { AppError } from '../errors/app-error.js';

// The one redaction every channel that carries a call's arguments or errors goes through (audit rows and
// their export, events, stored outcomes, logs, trace spans, MCP results, upstream error messages): values
// under a credential-like name, and values shaped like a well-known credential, wherever they appear.

export const REDACTED = '[redacted]';

// By name, case-insensitively: any header, env variable, query parameter or JSON key that contains one of
// these. `auth` is not read inside author/authority (authorization is), so a commit's author stays visible.
const NAME_PARTS = /token|secret|passw(?:or)?d|passphrase|credential|session|cookie|signature|auth(?!or(?!i[sz]))/;
// `key` counts as a word of the name, or the end of one (`key`, `keys`, `api_key`, `X-Goog-Api-Key`,
// `apikey`, `primaryKey`), never as the start of a longer word: `keyword`, `keyboard`, `keyframe` stay.
// `sig` (Azure SAS) and `pwd` count as whole words only.
const KEY_WORD = /keys?$/;
const WHOLE_WORDS: ReadonlySet<string> = new Set(['sig', 'pwd']);
// One cheap test that most names (path, content, url, argv ...) fail at once.
const MAYBE_SENSITIVE_NAME = /key|token|secret|pass|pwd|credential|session|cookie|sig|auth/i;

export function isSensitiveName(name: string): boolean {
  if (!MAYBE_SENSITIVE_NAME.test(name)) return false;
  if (NAME_PARTS.test(name.toLowerCase())) return true;
  return wordsOf(name).some((word) => KEY_WORD.test(word) || WHOLE_WORDS.has(word));
}

// `X-Goog-Api-Key` -> x goog api key; `OPENAI_API_KEY` -> openai api key; `apiKeyId` -> api key id.
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

// By value: well-known credential formats, wherever they sit in a text.
const CREDENTIAL_FORMATS = [
  // PEM private keys (RSA, EC, OPENSSH, ENCRYPTED ...), to their end line or the end of a text cut short.
  String.raw`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`,
  // OpenAI and Anthropic (sk-proj-…, sk-ant-…), Stripe (sk_live_…, rk_test_…).
  String.raw`(?<![\w-])sk-[\w-]{16,}`,
  String.raw`(?<![\w-])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}`,
  // GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained tokens.
  String.raw`(?<![\w-])gh[pousr]_[A-Za-z0-9]{20,}`,
  String.raw`(?<![\w-])github_pat_\w{20,}`,
  // Slack.
  String.raw`(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}`,
  // AWS access key ids, Google API keys.
  String.raw`(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])`,
  String.raw`(?<![\w-])AIza[\w-]{35}`,
  // JWTs: two base64url JSON objects and a signature (possibly empty).
  String.raw`(?<![\w-])eyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]*`,
];
const CREDENTIAL_VALUE = new RegExp(CREDENTIAL_FORMATS.join('|'), 'g');
// `Bearer <token>`: the token, when it holds a digit (prose such as "bearer instruments" does not).
const BEARER = /\b([Bb]earer\s+)((?=[\w.~+/=-]*\d)[\w.~+/=-]{8,})/g;
// Name/value pairs in text: JSON members, query parameters and assignments (`?api_key=…`, `TOKEN=…`,
// `--password=…`), header or YAML lines (`X-Api-Key: …`), and the password of a URL's userinfo.
const JSON_MEMBER = /"((?:[^"\\\n]|\\.){1,128})"(\s*:\s*)("(?:[^"\\]|\\.)*"?|[^\s,{}[\]"]+)/g;
// An assignment's value ends before the punctuation of the sentence around it (`?token=abc: refused`).
const ASSIGNMENT = /(^|[?&;\s"'(,])(-{0,2}[A-Za-z_][\w.-]{0,127})=("[^"\n]*"|'[^'\n]*'|[^&\s"'#;,<>)]*[^&\s"'#;,<>).:!?])/g;
const HEADER_LINE = /^([ \t]*)([A-Za-z0-9][\w-]{0,127})([ \t]*:[ \t]*)(\S[^\r\n]*)$/gm;
// The scheme starts where no scheme character precedes it (not merely at a word boundary, which every
// letter after a '-' or '.' is): each run of scheme characters is tried once, not once per position in it.
const USERINFO = /((?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)([^\s/@]+)(?=@)/gi;
// One test that most texts fail at once: nothing in them could be redacted.
const MAYBE_CREDENTIAL =
  /key|token|secret|pass|pwd|credential|session|cookie|sig|auth|bearer|sk-|[sr]k_|gh[pousr]_|github_pat_|xox|AKIA|ASIA|AIza|eyJ|PRIVATE KEY|:\/\/[^\s/]*@/i;

// The text with every credential it shows replaced by "[redacted]"; each value taken out is pushed to
// `found` (so a message quoting one elsewhere can be scrubbed too). The very same string when nothing was.
export function redactText(text: string, found?: string[]): string {
  if (!MAYBE_CREDENTIAL.test(text)) return text;
  const take = (value: string) => {
    if (value !== REDACTED) found?.push(value);
    return REDACTED;
  };
  return text
    .replace(CREDENTIAL_VALUE, take)
    .replace(BEARER, (_, scheme: string, token: string) => scheme + take(token))
    .replace(JSON_MEMBER, (pair, name: string, colon: string, value: string) => {
      if (!isSensitiveName(name) || value === `"${REDACTED}"`) return pair;
      take(value.startsWith('"') ? value.replace(/^"|"$/g, '') : value);
      return `"${name}"${colon}"${REDACTED}"`;
    })
    .replace(ASSIGNMENT, (pair, before: string, name: string, value: string) => {
      if (!isSensitiveName(name) || value === REDACTED) return pair;
      return `${before}${name}=${take(value.replace(/^(["'])(.*)\1$/, '$2'))}`;
    })
    .replace(HEADER_LINE, (line, indent: string, name: string, colon: string, value: string) => {
      if (!isSensitiveName(name) || value === REDACTED) return line;
      return `${indent}${name}${colon}${take(value)}`;
    })
    .replace(USERINFO, (_, before: string, password: string) => before + take(password));
}

// A URL as it may be shown: the values of query parameters with credential-like names, and the password of
// its userinfo, replaced by `mask`. Text that is not a URL is masked the same way, as far as it goes.
export function maskUrl(url: string, mask: string = REDACTED): string {
  const query = url.indexOf('?');
  let out = url;
  if (query !== -1) {
    const hash = url.indexOf('#', query);
    const end = hash === -1 ? url.length : hash;
    const params = url
      .slice(query + 1, end)
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        return eq > 0 && isSensitiveName(decodedName(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=${mask}` : pair;
      });
    out = `${url.slice(0, query + 1)}${params.join('&')}${url.slice(end)}`;
  }
  return out.replace(USERINFO, (_, before: string) => before + mask);
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

// The values of a URL a message could quote on their own: those of its credential-like query parameters.
export function urlSecrets(url: string): string[] {
  try {
    const values: string[] = [];
    for (const [name, value] of new URL(url).searchParams) if (value !== '' && isSensitiveName(name)) values.push(value);
    return values;
  } catch {
    return [];
  }
}

// Shortest known value that is looked for in messages: shorter ones would blank ordinary words.
const MIN_SCRUBBED_LENGTH = 4;
// Messages quote values cut short ("'sk-live-abcdef…'"): a run of at least this many characters of a
// secret, starting where the secret starts, is blanked too.
const MIN_SCRUBBED_PREFIX = 8;

// Blanks every known secret a text quotes, whole or cut short, raw or JSON-escaped.
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < MIN_SCRUBBED_LENGTH) continue;
    const escaped = JSON.stringify(secret).slice(1, -1);
    for (const form of escaped === secret ? [secret] : [secret, escaped]) out = blankRuns(out, form);
  }
  return out;
}

function blankRuns(text: string, secret: string): string {
  const head = secret.slice(0, Math.min(secret.length, MIN_SCRUBBED_PREFIX));
  let out = '';
  let from = 0;
  for (let at = text.indexOf(head); at >= 0; at = text.indexOf(head, from)) {
    let end = at + head.length;
    while (end < text.length && end - at < secret.length && text[end] === secret[end - at]) end++;
    out += text.slice(from, at) + REDACTED;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}

// Blanks every known value a text quotes whole, raw or JSON-escaped: for values the service never cuts short
// itself (an executor's own headers, which an upstream echoes as it got them).
export function scrubWholeValues(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of values) {
    if (value.length < MIN_SCRUBBED_LENGTH) continue;
    const escaped = JSON.stringify(value).slice(1, -1);
    out = out.replaceAll(value, REDACTED);
    if (escaped !== value) out = out.replaceAll(escaped, REDACTED);
  }
  return out;
}

// A message about a call, as every channel may carry it: the call's known secrets (the values its
// arguments' redaction took out) blanked, then anything else that looks like a credential.
export const redactMessage = (text: string, secrets: readonly string[] = []): string => redactText(scrubSecrets(text, secrets));

const MAX_DEPTH = 32;

// Every string of a JSON value passed through `redact` (an error's details, its issues); the very same
// value when nothing changed.
export function redactStrings<T>(value: T, redact: (text: string) => string, depth = 0): T {
  if (typeof value === 'string') return redact(value) as T;
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    value.forEach((item: unknown, i) => {
      const after = redactStrings(item, redact, depth + 1);
      if (after !== item) (copy ??= value.slice())[i] = after;
    });
    return (copy ?? value) as T;
  }
  let copy: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const after = redactStrings(item, redact, depth + 1);
    if (after !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = after;
  }
  return (copy ?? value) as T;
}

// A refusal as it may leave the service (to the caller, an MCP client, the audit, a span): its message,
// details and extra fields passed through `redact` (by default: what looks like a credential). The same
// error when nothing in it needed to be.
export function redactAppError(error: AppError, redact: (text: string) => string = redactText): AppError {
  const message = redact(error.message);
  const details = redactStrings(error.details, redact);
  const extra = redactStrings(error.extra, redact);
  if (message === error.message && details === error.details && extra === error.extra) return error;
  return new AppError(error.status, error.code, message, { details, extra, headers: error.headers });
}
