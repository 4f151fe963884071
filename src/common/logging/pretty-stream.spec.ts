import { createPinoLogger } from './json-logger.js';
import { formatLine, logDestination } from './pretty-stream.js';

const terminal = () => {
  const lines: string[] = [];
  return { lines, isTTY: true, write: (text: string) => lines.push(text) };
};

describe('log destination and readable lines', () => {
  it('keeps JSON on a pipe and with LOG_FORMAT=json, and turns readable on a terminal or with LOG_FORMAT=pretty', () => {
    expect(logDestination('auto', { isTTY: false, write: () => true })).toBeUndefined();
    expect(logDestination('json', terminal())).toBeUndefined();
    expect(logDestination('auto', terminal())).toBeDefined();
    expect(logDestination('pretty', { isTTY: false, write: () => true })).toBeDefined();
  });

  it('prints time, level, context, message and the other fields, with secrets still redacted', () => {
    const out = {
      lines: [] as string[],
      write(text: string) {
        this.lines.push(text);
      },
    };
    const logger = createPinoLogger('info', logDestination('pretty', out));
    logger.info({ context: 'Tools', requestId: 'r-1', authorization: 'Bearer tg_secret', nested: { n: 1 } }, 'call ran');
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO  \[Tools\] call ran  requestId=r-1 authorization=\[redacted\] nested=\{"n":1\}\n$/,
    );
    expect(out.lines[0]).not.toContain('tg_secret');
  });

  it('prints an error with its stack on the following lines, and colours only for a terminal', () => {
    const err = new Error('boom');
    const line = JSON.stringify({
      level: 'error',
      time: '2026-11-24T03:00:00.123Z',
      err: { type: 'Error', message: 'boom', stack: err.stack },
    });
    const plain = formatLine(line, false);
    expect(plain.split('\n')[0]).toBe('03:00:00.123 ERROR boom');
    expect(plain.split('\n')[1]).toBe('    Error: boom');
    expect(formatLine(line, true)).toContain('\x1b[31mERROR\x1b[0m');
    expect(formatLine('not json', false)).toBe('not json');
  });
});
