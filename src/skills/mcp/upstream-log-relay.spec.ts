import type { ToolLogMessage } from '../../execution/tool-logs.js';
import { MAX_LOG_DATA_CHARS, MAX_RELAYED_LOG_MESSAGES, upstreamLogRelay } from './upstream-log-relay.js';

describe('upstreamLogRelay', () => {
  const relayAt = (level: ToolLogMessage['level'], secrets: string[] = []) => {
    const sent: ToolLogMessage[] = [];
    return { sent, relay: upstreamLogRelay({ level, send: (message) => sent.push(message) }, secrets, 'the_tool') };
  };

  it('passes messages at or above the level and drops the rest, and anything that is no log message', () => {
    const { sent, relay } = relayAt('error');
    for (const level of ['debug', 'warning', 'error', 'emergency', 'verbose']) relay({ level, data: level });
    relay(null);
    relay('error');
    expect(sent).toEqual([
      { level: 'error', logger: 'the_tool', data: 'error' },
      { level: 'emergency', logger: 'the_tool', data: 'emergency' },
    ]);
  });

  it('keeps the upstream’s logger name, cut to 128 characters', () => {
    const { sent, relay } = relayAt('debug');
    relay({ level: 'info', logger: 'db', data: {} });
    relay({ level: 'info', logger: 'x'.repeat(300), data: {} });
    expect(sent.map((message) => message.logger)).toEqual(['db', 'x'.repeat(128)]);
  });

  it('blanks the upstream’s credentials in data and logger, and keeps data that needed nothing blanked as it came', () => {
    const { sent, relay } = relayAt('debug', ['s3cret-header-value']);
    const clean = { a: [1, { b: 'two' }] };
    relay({ level: 'info', data: clean });
    relay({ level: 'info', logger: 'got s3cret-header-value', data: { deep: { deeper: ['s3cret-header-value'] } } });
    relay({ level: 'info', data: 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789' });
    expect(sent[0].data).toBe(clean);
    expect(sent[1]).toEqual({ level: 'info', logger: 'got [redacted]', data: { deep: { deeper: ['[redacted]'] } } });
    expect(sent[2].data).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789');
  });

  it('blanks a credential the cut would split, and any part of it that the redaction’s shortening brings into what is kept', () => {
    const secret = 'HdrSecretKey77665544332211qq';
    const { sent, relay } = relayAt('debug', [secret]);
    // Lengthened until the cut falls inside the credential (an upstream logging the request it got).
    for (let pad = MAX_LOG_DATA_CHARS - 60; pad < MAX_LOG_DATA_CHARS; pad++)
      relay({ level: 'debug', data: { arguments: { q: 'p'.repeat(pad) }, rawHeaders: ['x-other', secret] } });
    // Many copies shrink as they are blanked, pulling text from past the window into what is kept.
    // The redaction reads a window of 2 × 8,192 + 1,024 characters; here it ends five characters into the
    // last copy, which only the margin keeps out.
    const copies = 600;
    relay({
      level: 'debug',
      data: `${`${secret} `.repeat(copies)}${'f'.repeat(MAX_LOG_DATA_CHARS * 2 + 1024 - copies * (secret.length + 1) - 5)}${secret}`,
    });
    const shown = JSON.stringify(sent);
    for (let i = 0; i + 5 <= secret.length; i++) expect(shown).not.toContain(secret.slice(i, i + 5));
    expect(
      sent.every((message) => typeof message.data === 'string' && message.data.endsWith(`… (cut at ${MAX_LOG_DATA_CHARS} characters)`)),
    ).toBe(true);
  });

  it('sends data longer than the cap as its text, cut', () => {
    const { sent, relay } = relayAt('debug');
    relay({ level: 'info', data: { text: 'y'.repeat(MAX_LOG_DATA_CHARS * 2) } });
    expect(typeof sent[0].data).toBe('string');
    expect(sent[0].data).toMatch(new RegExp(`^\\{"text":"y+… \\(cut at ${MAX_LOG_DATA_CHARS} characters\\)$`));
  });

  it('relays at most MAX_RELAYED_LOG_MESSAGES, then one warning, then nothing; the warning only where the level lets it through', () => {
    const { sent, relay } = relayAt('info');
    for (let i = 0; i < MAX_RELAYED_LOG_MESSAGES + 50; i++) relay({ level: 'info', data: i });
    expect(sent.length).toBe(MAX_RELAYED_LOG_MESSAGES + 1);
    expect(sent.at(-1)).toEqual({
      level: 'warning',
      logger: 'the_tool',
      data: `More than ${MAX_RELAYED_LOG_MESSAGES} log messages in one call: the rest were dropped`,
    });
    const strict = relayAt('critical');
    for (let i = 0; i < MAX_RELAYED_LOG_MESSAGES + 5; i++) strict.relay({ level: 'alert', data: i });
    expect(strict.sent.length).toBe(MAX_RELAYED_LOG_MESSAGES);
  });
});
