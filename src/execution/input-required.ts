import { createHash } from 'node:crypto';

// Multi round-trip requests (MCP protocol revision 2026-07-28, SEP-2322): a server that needs something from
// the client (a person's answer, a model's completion, the client's roots) answers the request with
// `resultType: "input_required"`, the requests it needs answered (`inputRequests`) and an opaque
// `requestState`; the client retries the same request with `inputResponses` and that state. Toolgate relays
// both ways for an MCP client of that revision whose source speaks it: the client's round goes to the
// source, the source's request for input comes back to the client (src/mcp/input-required).

// The requests a server may embed in `inputRequests`, and the client capability each needs declared.
export const INPUT_REQUEST_CAPABILITIES: Readonly<Record<string, 'elicitation' | 'sampling' | 'roots'>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

// What a call of an MCP client of revision 2026-07-28 carries to the source behind the tool.
export interface InputRound {
  // The client's answers to what the source asked in the round before, by the source's keys, as sent.
  inputResponses?: Record<string, unknown>;
  // The source's own requestState from the round before (Toolgate's sealed state, opened).
  requestState?: string;
  // The source that state was given by (sourceIdentity): it goes back to that source only.
  requestStateSource?: string;
  // What the client declared it answers: elicitation, sampling, roots (its request's
  // io.modelcontextprotocol/clientCapabilities, those three only), passed on to the source.
  clientCapabilities: Record<string, unknown>;
}

export interface InputRequest {
  method: string;
  params?: Record<string, unknown>;
}

// A source's request for input, as it sent it (checked: inputRequestsProblem).
export interface InputRequiredAnswer {
  inputRequests?: Record<string, InputRequest>;
  // The source's own state, which goes back to it with the client's retry (sealed inside Toolgate's).
  requestState?: string;
  // Which source asked (sourceIdentity), sealed with the state: a retry reaches that source or none.
  source?: string;
}

// A source as a sealed state names it, a digest of: the skill that serves the tool or prompt (its name and
// version, ToolDefinition.source) and the server's URL. A skill re-pointed, replaced or disabled is another source.
export const sourceIdentity = (skill: string, url: string): string =>
  createHash('sha256')
    .update(JSON.stringify([skill, url]))
    .digest('base64url');

// Whether the client's round may go to `source`: a round with a state goes only to the source that gave it.
export const roundIsFor = (round: InputRound, source: string): boolean =>
  round.requestStateSource === undefined || round.requestStateSource === source;

// The most input requests one answer may carry, and the longest state of its own a source may ask to get back.
export const MAX_INPUT_REQUESTS = 32;
export const MAX_SOURCE_REQUEST_STATE_CHARS = 64 * 1024;

// The tool did not finish: its source asked for input. The call answers `status: "error"` with code
// `input_required`, audited as `input_required`; an MCP client of 2026-07-28 gets the source's request.
export class InputRequired extends Error {
  constructor(readonly required: InputRequiredAnswer) {
    super(
      `The tool needs input from the client first (${describeInputRequests(required.inputRequests)}): the client answers it and calls again`,
    );
    this.name = 'InputRequired';
  }
}

export const INPUT_REQUIRED = 'input_required';

// A source of 2026-07-28 refused the call for a capability the client did not declare (-32021,
// MissingRequiredClientCapabilityError, data.requiredCapabilities): the client gets that error as the
// source gave it, and may call again declaring it. Any other caller never gets it (no round, no such source).
export const MISSING_CLIENT_CAPABILITY = -32021;

// What a source's -32021 names the client must declare (error.data.requiredCapabilities: capabilities, each
// an object), or null when it names nothing usable; it goes to the client, so it is kept small.
export function requiredCapabilities(data: unknown): Record<string, unknown> | null {
  const required = isPlainObject(data) ? data.requiredCapabilities : undefined;
  if (!isPlainObject(required)) return null;
  const kept = Object.fromEntries(Object.entries(required).filter(([name, value]) => isPlainObject(value) && /^[\w./-]{1,64}$/.test(name)));
  return Object.keys(kept).length > 0 && JSON.stringify(kept).length <= 4096 ? kept : null;
}
export class MissingClientCapability extends Error {
  constructor(
    readonly requiredCapabilities: Record<string, unknown>,
    message: string,
  ) {
    super(message);
    this.name = 'MissingClientCapability';
  }
}

// What a source's input_required answer may be, or why it is not: inputRequests an object of requests
// of the three kinds (at most MAX_INPUT_REQUESTS), requestState a string, and at least one of them.
export function inputRequestsProblem(answer: Record<string, unknown>): string | null {
  const { inputRequests, requestState } = answer;
  if (inputRequests === undefined && requestState === undefined)
    return 'an input_required answer with neither inputRequests nor requestState';
  if (requestState !== undefined && typeof requestState !== 'string') return 'a requestState that is not a string';
  if (typeof requestState === 'string' && requestState.length > MAX_SOURCE_REQUEST_STATE_CHARS)
    return `a requestState longer than ${MAX_SOURCE_REQUEST_STATE_CHARS} characters`;
  if (inputRequests === undefined) return null;
  if (!isPlainObject(inputRequests)) return 'inputRequests that is not an object';
  const entries = Object.entries(inputRequests);
  if (entries.length > MAX_INPUT_REQUESTS) return `more than ${MAX_INPUT_REQUESTS} inputRequests`;
  for (const [key, request] of entries) {
    if (!isPlainObject(request) || typeof request.method !== 'string') return `an input request (${printable(key)}) without a method`;
    if (INPUT_REQUEST_CAPABILITIES[request.method] === undefined)
      return `an input request (${printable(key)}) of method ${printable(request.method)}, which is none of ${Object.keys(INPUT_REQUEST_CAPABILITIES).join(', ')}`;
    if (request.params !== undefined && !isPlainObject(request.params))
      return `an input request (${printable(key)}) whose params are not an object`;
  }
  return null;
}

// The first input request the client has not declared it can answer, described, or null. A server must not
// send those (SEP-2322); a source that does is not relayed. URL-mode elicitation needs elicitation.url;
// form mode an empty elicitation or elicitation.form.
export function undeclaredInput(
  inputRequests: Record<string, InputRequest> | undefined,
  capabilities: Record<string, unknown>,
): string | null {
  for (const [key, request] of Object.entries(inputRequests ?? {})) {
    const capability = INPUT_REQUEST_CAPABILITIES[request.method];
    const declared = capabilities[capability];
    if (!isPlainObject(declared)) return `${request.method} (${printable(key)}), but the client did not declare ${capability}`;
    if (request.method === 'elicitation/create' && request.params?.mode === 'url' && !isPlainObject(declared.url)) {
      return `a URL-mode elicitation (${printable(key)}), but the client did not declare elicitation.url`;
    }
    // Form mode (the default): an empty elicitation declares it, as do clients of before the modes; one that
    // names its modes declares form only with elicitation.form.
    if (
      request.method === 'elicitation/create' &&
      request.params?.mode !== 'url' &&
      Object.keys(declared).length > 0 &&
      !isPlainObject(declared.form)
    ) {
      return `a form-mode elicitation (${printable(key)}), but the client declared only ${Object.keys(declared).map(printable).slice(0, 4).join(', ')} of elicitation, not elicitation.form`;
    }
  }
  return null;
}

// The client capabilities a source is told of: the three it may ask input of, as the client declared them.
export function inputCapabilities(declared: unknown): Record<string, unknown> {
  if (!isPlainObject(declared)) return {};
  const kept: Record<string, unknown> = {};
  for (const capability of Object.values(INPUT_REQUEST_CAPABILITIES))
    if (isPlainObject(declared[capability])) kept[capability] = declared[capability];
  return kept;
}

export function describeInputRequests(inputRequests: Record<string, InputRequest> | undefined): string {
  const entries = Object.entries(inputRequests ?? {});
  if (entries.length === 0) return 'no request of its own, only its state to send back';
  const shown = entries.slice(0, 5).map(([key, request]) => `${request.method} ${printable(key)}`);
  return entries.length > 5 ? `${shown.join(', ')} and ${entries.length - 5} more` : shown.join(', ');
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const printable = (value: string): string => `'${value.replace(/[^\x20-\x7e]/g, '?').slice(0, 64)}'`;
