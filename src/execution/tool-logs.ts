// Log messages a running tool sends its caller (MCP's notifications/message): an MCP source relays its
// upstream server's to an MCP client that asked for them (logging/setLevel, or revision 2026-07-28's
// per-request _meta level).

// MCP's levels, the syslog severities of RFC 5424, least severe first.
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const isLogLevel = (value: unknown): value is LogLevel =>
  typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);

// Whether a message of `level` passes a client's `threshold` (that level or more severe).
export const passes = (level: LogLevel, threshold: LogLevel): boolean => LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);

export interface ToolLogMessage {
  level: LogLevel;
  // Who logged it (MCP's optional logger name).
  logger?: string;
  data: unknown;
}

// Where a call's log messages go, and the least severe level the caller wants.
export interface ToolLogs {
  level: LogLevel;
  send(message: ToolLogMessage): void;
}
