import { AppError } from '../errors/app-error.js';
import {
  isSensitiveName,
  maskUrl,
  REDACTED,
  redactAppError,
  redactMessage,
  redactStrings,
  redactText,
  scrubSecrets,
  scrubWholeValues,
  urlSecrets,
} from './secret-redaction.js';

describe('secret redaction', () => {
  describe('by name', () => {
    it('recognises credential names of headers, env variables, query parameters and JSON keys, in any case and spelling', () => {
      const names = [
        'Authorization',
        'PROXY-AUTHORIZATION',
        'cookie',
        'Set-Cookie',
        'X-Api-Key',
        'api_key',
        'apikey',
        'key',
        'keys',
        'x-auth-token',
        'clientSecret',
        'db_password',
        'PGPASSWD',
        'refresh_token',
        'OPENAI_API_KEY',
        'X-Goog-Api-Key',
        'XGoogAPIKey',
        'DD-API-KEY',
        'Ocp-Apim-Subscription-Key',
        'AWS_ACCESS_KEY_ID',
        'privateKey',
        'sessionId',
        'X-Amz-Signature',
        'X-Amz-Credential',
        'oauth',
        'sig',
        'DB_PWD',
        'passphrase',
      ];
      for (const name of names) expect({ name, sensitive: isSensitiveName(name) }).toEqual({ name, sensitive: true });
    });

    it('leaves ordinary names alone, keyword and author included', () => {
      const names = [
        'path',
        'paths',
        'content',
        'url',
        'headers',
        'keyword',
        'keywords',
        'keyboard',
        'keyframe',
        'author',
        'authors',
        'authority',
        'authorName',
        'method',
        'passthrough',
        'signal',
        'design',
        'argv',
      ];
      for (const name of names) expect({ name, sensitive: isSensitiveName(name) }).toEqual({ name, sensitive: false });
    });
  });

  describe('in text', () => {
    it('blanks well-known credential formats wherever they appear', () => {
      const values = [
        'sk-proj-0123456789abcdefABCDEF',
        'sk-ant-api03-0123456789abcdef',
        'sk_live_0123456789abcdef',
        `ghp_${'a1'.repeat(18)}`,
        `github_pat_${'B2'.repeat(15)}`,
        'xoxb-123456789012-abcdefghij',
        'AKIAIOSFODNN7EXAMPLE',
        `AIza${'x'.repeat(35)}`,
        'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbm4ifQ.c2lnbmF0dXJl',
      ];
      for (const value of values) {
        const found: string[] = [];
        expect(redactText(`before ${value} after`, found)).toBe(`before ${REDACTED} after`);
        expect(found).toEqual([value]);
      }
    });

    it('blanks a PEM private key whole, and one cut short to the end of the text', () => {
      const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';
      expect(redactText(`key:\n${pem}\nrest`)).toBe(`key:\n${REDACTED}\nrest`);
      expect(redactText('got -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA…')).toBe(`got ${REDACTED}`);
    });

    it('blanks values by name: JSON members, query parameters, assignments, header lines, userinfo, Bearer tokens', () => {
      expect(redactText('{"user":"ann","password":"hunter2","n":1}')).toBe(`{"user":"ann","password":"${REDACTED}","n":1}`);
      expect(redactText('{"apiToken": 12345678}')).toBe(`{"apiToken": "${REDACTED}"}`);
      expect(redactText('GET https://x.test/a?q=1&api_key=abc123&sig=zz#top')).toBe(
        `GET https://x.test/a?q=1&api_key=${REDACTED}&sig=${REDACTED}#top`,
      );
      expect(redactText('OPENAI_API_KEY=abc123 --password="two words" keyword=shoes')).toBe(
        `OPENAI_API_KEY=${REDACTED} --password=${REDACTED} keyword=shoes`,
      );
      expect(redactText('Accept: json\nX-Api-Key: abc123\n  Cookie: a=b')).toBe(
        `Accept: json\nX-Api-Key: ${REDACTED}\n  Cookie: ${REDACTED}`,
      );
      expect(redactText('postgres://app:s3cret@db:5432/x')).toBe(`postgres://app:${REDACTED}@db:5432/x`);
      expect(redactText('sent Authorization Bearer abc.def-123456')).toBe(`sent Authorization Bearer ${REDACTED}`);
    });

    it('leaves ordinary text alone, and answers the same string', () => {
      const texts = [
        'Invalid arguments for read_file: /path must be string, got number',
        'The bearer instrument was signed by the author',
        'keyword=shoes&page=2',
        'Usage: fetch_url(url: string, headers?: object)',
        'https://example.test/search?q=token+limits',
        'The tool did not finish within 300 ms and was stopped',
      ];
      for (const text of texts) expect(redactText(text)).toBe(text);
    });
  });

  it('masks the credential query values and userinfo of a URL, with the mask asked for', () => {
    expect(maskUrl('https://mcp.test/mcp?api_key=abc&team=a%20b&X-Goog-Api-Key=zz')).toBe(
      `https://mcp.test/mcp?api_key=${REDACTED}&team=a%20b&X-Goog-Api-Key=${REDACTED}`,
    );
    expect(maskUrl('https://mcp.test/mcp?access%5Ftoken=abc#frag', '[stored encrypted]')).toBe(
      'https://mcp.test/mcp?access%5Ftoken=[stored encrypted]#frag',
    );
    expect(maskUrl('https://u:p4ss@mcp.test/')).toBe(`https://u:${REDACTED}@mcp.test/`);
    expect(maskUrl('https://mcp.test/mcp?q=1')).toBe('https://mcp.test/mcp?q=1');
    expect(urlSecrets('https://mcp.test/mcp?api_key=abc&q=1&token=')).toEqual(['abc']);
  });

  it('scrubs messages that quote a known value whole, cut short or JSON-escaped', () => {
    const secret = 'plant-0123456789abcdef0123456789abcdef0123456789';
    expect(scrubSecrets(`got '${secret.slice(0, 39)}…'`, [secret])).toBe("got '[redacted]…'");
    expect(scrubSecrets(`value ${secret} twice ${secret}`, [secret])).toBe('value [redacted] twice [redacted]');
    expect(scrubSecrets('say "a\\"b-quoted-secret"', ['a"b-quoted-secret'])).toBe('say "[redacted]"');
    expect(scrubSecrets('an ordinary message', ['abc'])).toBe('an ordinary message');
    expect(redactMessage(`echo ${secret} and sk-proj-0123456789abcdefABCDEF`, [secret])).toBe('echo [redacted] and [redacted]');
  });

  it('blanks whole values only, when asked to', () => {
    expect(scrubWholeValues('upstream says no; got Bearer upstream-secret', ['Bearer upstream-secret', 'upstream-secret'])).toBe(
      'upstream says no; got [redacted]',
    );
    expect(scrubWholeValues('{"a":"x\\"y-quoted"}', ['x"y-quoted'])).toBe('{"a":"[redacted]"}');
  });

  it('redacts every string of a value and the texts of a refusal, and keeps them when nothing changes', () => {
    const scrub = (text: string) => redactMessage(text, ['plant-0123456789abcdef']);
    const details = { issues: [{ path: '/pin', received: "'plant-0123456789…'" }], n: 1 };
    expect(redactStrings(details, scrub)).toEqual({ issues: [{ path: '/pin', received: "'[redacted]…'" }], n: 1 });
    expect(redactStrings(details, redactText)).toBe(details);

    const error = new AppError(422, 'invalid_arguments', "/pin must match, got 'plant-0123456789…'", {
      extra: details,
      headers: { 'Retry-After': '1' },
    });
    const redacted = redactAppError(error, scrub);
    expect(redacted).toBeInstanceOf(AppError);
    expect(redacted).toMatchObject({
      status: 422,
      code: 'invalid_arguments',
      message: "/pin must match, got '[redacted]…'",
      headers: { 'Retry-After': '1' },
    });
    expect(redacted.extra).toEqual({ issues: [{ path: '/pin', received: "'[redacted]…'" }], n: 1 });
    expect(redacted.stack).not.toContain('plant-');
    const plain = new AppError(404, 'tool_not_found', 'No tool named read_fil');
    expect(redactAppError(plain)).toBe(plain);
    expect(redactAppError(new AppError(403, 'url_blocked', 'Refused to fetch https://x.test/?token=abc123: private')).message).toBe(
      'Refused to fetch https://x.test/?token=[redacted]: private',
    );
  });
});
