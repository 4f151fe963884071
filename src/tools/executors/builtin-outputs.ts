import { COMMAND_LIMITS } from '../../execution/process/limit-outcome.js';
import type { JsonSchema } from '../../execution/validation/schema-type.js';

// What each built-in tool returns when it succeeds, as MCP's tools/list advertises it (outputSchema) and as
// every result is checked against before it is answered (tool-output-check.ts). Open objects: a field added
// later does not break a client that validates. A display title for people beside each.

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const entryType = { type: 'string', enum: ['file', 'directory', 'symlink', 'other'] } as const;
const object = (properties: Record<string, unknown>, required: string[]): JsonSchema => ({ type: 'object', properties, required });
// A value that may be null, as branches of one type each: clients that map a schema onto a single-`type`
// dialect (and the MCP Inspector's schema lint) take `anyOf` where they refuse `type: [..., "null"]`.
const orNull = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });

const readFile = object(
  {
    path: str,
    encoding: { type: 'string', enum: ['utf8', 'base64'] },
    content: str,
    size: int,
    truncated: bool,
    totalLines: int,
    nextOffset: int,
    hint: str,
  },
  ['path', 'encoding', 'content', 'size', 'truncated'],
);

export const BUILTIN_OUTPUTS: Record<string, { title: string; outputSchema: JsonSchema }> = {
  read_file: { title: 'Read a file', outputSchema: readFile },
  write_file: {
    title: 'Write a file',
    outputSchema: object({ path: str, bytesWritten: int, created: bool }, ['path', 'bytesWritten', 'created']),
  },
  list_files: {
    title: 'List files',
    outputSchema: object(
      {
        path: str,
        entries: {
          type: 'array',
          items: { type: 'object', properties: { path: str, name: str, type: entryType, escapedName: bool }, required: ['type'] },
        },
        truncated: bool,
      },
      ['path', 'entries', 'truncated'],
    ),
  },
  delete_file: { title: 'Delete a file or directory', outputSchema: object({ path: str, type: entryType }, ['path', 'type']) },
  shell_exec: {
    title: 'Run a command',
    outputSchema: object(
      {
        exitCode: orNull(int),
        signal: orNull(str),
        stdout: str,
        stderr: str,
        stdoutTruncated: bool,
        stderrTruncated: bool,
        killed: orNull({ type: 'string', enum: [...COMMAND_LIMITS] }),
        note: orNull(str),
        durationMs: { type: 'number' },
      },
      ['exitCode', 'stdout', 'stderr'],
    ),
  },
  fetch_url: {
    title: 'Fetch a URL',
    outputSchema: object(
      {
        url: str,
        finalUrl: str,
        status: int,
        statusText: str,
        headers: { type: 'object', additionalProperties: str },
        body: str,
        bodyEncoding: { type: 'string', enum: ['utf8', 'base64'] },
        bytes: int,
        truncated: bool,
        timedOut: bool,
        redirects: { type: 'array', items: str },
      },
      ['url', 'status', 'headers', 'body', 'bodyEncoding', 'truncated'],
    ),
  },
  edit_file: {
    title: 'Edit a file',
    outputSchema: object({ path: str, edits: int, dryRun: bool, written: bool, diff: str }, ['path', 'edits', 'dryRun', 'diff']),
  },
  search_files: {
    title: 'Search files',
    outputSchema: object(
      {
        matches: {
          type: 'array',
          items: { type: 'object', properties: { path: str, line: int, text: str }, required: ['path', 'line', 'text'] },
        },
        truncated: bool,
        filesSearched: int,
        filesSkipped: int,
        stoppedBy: { type: 'string', enum: ['maxResults', 'budget'] },
        hint: str,
      },
      ['matches', 'truncated'],
    ),
  },
  move_file: {
    title: 'Move or rename a file',
    outputSchema: object({ source: str, destination: str, type: entryType, overwritten: bool }, ['source', 'destination', 'type']),
  },
  read_multiple_files: {
    title: 'Read several files',
    outputSchema: object(
      {
        files: { type: 'array', items: { type: 'object', properties: { path: str, ok: bool }, required: ['path', 'ok'] } },
        read: int,
        failed: int,
      },
      ['files', 'read', 'failed'],
    ),
  },
};
