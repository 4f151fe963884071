import { redactMessage } from '../../common/secrets/secret-redaction.js';
import { isLogLevel, passes, type ToolLogs } from '../../execution/tool-logs.js';

// The most log messages one call relays, and the most characters of one message's data (as JSON): an upstream
// server is the tenant's, not ours, and its messages go out on the caller's open response.
export const MAX_RELAYED_LOG_MESSAGES = 100;
export const MAX_LOG_DATA_CHARS = 8 * 1024;
const MAX_LOGGER_LENGTH = 128;

// Turns an upstream MCP server's notifications/message params into the messages `logs` receives: those at
// or above the caller's level (whatever level the upstream was asked for, it may send others), with the
// upstream's credentials and anything else that looks like one blanked (the server may echo the headers it
// got), data cut to MAX_LOG_DATA_CHARS characters, and at most MAX_RELAYED_LOG_MESSAGES per call, the last of them
// saying the rest were dropped. `logger`: the name used when the upstream gives none.
export function upstreamLogRelay(logs: ToolLogs, secrets: readonly string[], logger: string): (params: unknown) => void {
  let relayed = 0;
  return (params) => {
    if (typeof params !== 'object' || params === null) return;
    const { level, logger: named, data } = params as Record<string, unknown>;
    if (!isLogLevel(level) || !passes(level, logs.level) || relayed > MAX_RELAYED_LOG_MESSAGES) return;
    if (++relayed > MAX_RELAYED_LOG_MESSAGES) {
      if (passes('warning', logs.level))
        logs.send({
          level: 'warning',
          logger,
          data: `More than ${MAX_RELAYED_LOG_MESSAGES} log messages in one call: the rest were dropped`,
        });
      return;
    }
    const name = typeof named === 'string' && named.length > 0 ? redactedPrefix(named, MAX_LOGGER_LENGTH, secrets).text : logger;
    logs.send({ level, logger: name, data: relayedData(data, secrets) });
  };
}

// The first `length` characters of a text as they may be shown. Blanked before anything is cut: a
// credential the cut would split is whole when the redaction looks at it (and the known ones are blanked from
// their first eight characters on, wherever a text cuts them). The redaction reads at most a window of twice
// that and a margin, so its work per message stays bounded; as it shortens what it blanks, text from near
// the window's end may move into what is kept: the margin before that end, where a credential may have
// been split by the window, never is.
const SPLIT_MARGIN = 1024;
function redactedPrefix(text: string, length: number, secrets: readonly string[]): { text: string; cut: boolean } {
  if (text.length <= length) return { text: redactMessage(text, secrets), cut: false };
  const window = text.slice(0, 2 * length + SPLIT_MARGIN);
  const redacted = redactMessage(window, secrets);
  const keep = window.length < text.length ? Math.min(length, redacted.length - SPLIT_MARGIN) : length;
  return { text: redacted.slice(0, Math.max(0, keep)), cut: true };
}

// Redacted as JSON text, so that no depth of nesting hides a string from it; data whose text the
// redaction changed into something that no longer parses, or that is too long, goes on as the text.
function relayedData(data: unknown, secrets: readonly string[]): unknown {
  const text = typeof data === 'string' ? data : JSON.stringify(data ?? null);
  const shown = redactedPrefix(text, MAX_LOG_DATA_CHARS, secrets);
  if (shown.cut) return `${shown.text}… (cut at ${MAX_LOG_DATA_CHARS} characters)`;
  if (typeof data === 'string') return shown.text;
  if (shown.text === text) return data;
  try {
    return JSON.parse(shown.text) as unknown;
  } catch {
    return shown.text;
  }
}
