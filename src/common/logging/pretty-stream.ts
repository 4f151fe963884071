import type { DestinationStream } from 'pino';
import type { AppConfig } from '../../config/app-config.js';

const COLORS: Record<string, string> = {
  fatal: '\x1b[35m',
  error: '\x1b[31m',
  warn: '\x1b[33m',
  info: '\x1b[32m',
  debug: '\x1b[36m',
  trace: '\x1b[90m',
};
const RESET = '\x1b[0m';
const DIM = '\x1b[2m';
// Shown in the line's head, not among the key=value pairs.
const HEAD = new Set(['time', 'level', 'msg', 'context', 'err', 'stack']);

interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

// Where the JSON lines go: stdout as they are (machines, LOG_FORMAT=json, or no terminal), or through
// prettyLines when a person reads the terminal (LOG_FORMAT=pretty, or auto on a TTY).
export function logDestination(format: AppConfig['logFormat'], out: Output = process.stdout): DestinationStream | undefined {
  if (format === 'json' || (format === 'auto' && out.isTTY !== true)) return undefined;
  return prettyLines(out, out.isTTY === true);
}

// One readable line per JSON line: time, level, [context], message, then the other fields as key=value;
// an error's stack follows on its own lines. Only the terminal pays for parsing the line again.
function prettyLines(out: Output, colors: boolean): DestinationStream {
  return {
    write(line: string) {
      for (const text of line.split('\n')) if (text) out.write(`${formatLine(text, colors)}\n`);
    },
  };
}

export function formatLine(line: string, colors: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof entry.level === 'string' ? entry.level : 'info';
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
  const label = level.toUpperCase().padEnd(5);
  const context = typeof entry.context === 'string' ? `[${entry.context}] ` : '';
  const fields = Object.entries(entry)
    .filter(([key, value]) => !HEAD.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  const err = entry.err as { message?: string; stack?: string } | undefined;
  const stack = err?.stack ?? (typeof entry.stack === 'string' ? entry.stack : undefined);
  const message = typeof entry.msg === 'string' ? entry.msg : (err?.message ?? '');
  const head = colors ? `${DIM}${time}${RESET} ${COLORS[level] ?? ''}${label}${RESET}` : `${time} ${label}`;
  const tail = fields ? (colors ? `  ${DIM}${fields}${RESET}` : `  ${fields}`) : '';
  return `${head} ${context}${message}${tail}${stack ? `\n    ${stack.split('\n').join('\n    ')}` : ''}`;
}
